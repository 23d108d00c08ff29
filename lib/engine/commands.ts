/**
 * The outbox: every command for the dispatcher — an API request, a schedule's or backfill's fire,
 * a trigger, a sub-workflow's start or halt — is written here, then signalled. The write is
 * conditional (`attribute_not_exists`) and the ids are deterministic, so one request, fire or
 * decision is one command however often it is made; the signal is a message on the events queue
 * (or, for a command not due yet, the delayed signals queue). A signal lost with a crash or a
 * failed send is sent again by the sweeper ({@link resignalStaleCommands}), which looks for
 * commands left PENDING; the dispatcher claims a command before it executes it, so a repeated
 * signal does nothing twice.
 */
import type { CommandType, RunRequest } from "../core/model.js";
import type { DispatcherMessage } from "../queue/messages.js";
import type { CommandRecord, WorkflowHead } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { EngineDeps } from "./engine-deps.js";

/** What writing and signalling commands needs. */
export type OutboxDeps = Pick<EngineDeps, "store" | "queues" | "now" | "log">;

/** `start:<instanceId>`: the START command of a run (its instance id names it). */
export function startCommandId(instanceId: string): string {
  return `start:${instanceId}`;
}

/** The START command of an instance, whatever its state (absent: no run of that id). */
export function getStartCommand(
  store: Pick<Store, "getCommand">,
  instanceId: string,
): Promise<CommandRecord | undefined> {
  return store.getCommand(startCommandId(instanceId));
}

/** The verb that opens a control command's id (the API's verbs), by command type. */
const CONTROL_VERBS = {
  STOP: "stop",
  PAUSE: "pause",
  RESUME: "resume",
  RERUN: "rerun",
  RECOVER_FAILED: "recover-failed",
} as const satisfies Partial<Record<CommandType, string>>;

/** Command types that act on an existing instance. */
export type ControlCommandType = keyof typeof CONTROL_VERBS;

/**
 * `<verb>:<instanceId>:<rev>` (verb `stop`, `pause`, `resume`, `rerun`, `recover-failed`). The
 * instance's revision makes the same request sent again before the dispatcher acted the same
 * command, and a parent stopping or resuming its child the same command as the API's.
 * @param rev the instance's `rev` when the command was decided (0: not created yet).
 */
export function controlCommandId(
  type: ControlCommandType,
  instanceId: string,
  rev: number,
): string {
  return `${CONTROL_VERBS[type]}:${instanceId}:${rev}`;
}

/**
 * A control command of an instance (PENDING, id from {@link controlCommandId}).
 * @param target the instance as the caller read it (`rev` 0, `workflow` "" and `version` 0 for
 *   one not created yet).
 */
export function controlCommand(
  type: ControlCommandType,
  target: { instanceId: string; workflow: string; version: number; rev: number },
  now: number,
): CommandRecord {
  return {
    commandId: controlCommandId(type, target.instanceId, target.rev),
    type,
    instanceId: target.instanceId,
    workflow: target.workflow,
    version: target.version,
    state: "PENDING",
    createdAt: now,
  };
}

/**
 * What a started run carries besides its run request: the START command's type and its optional
 * fields (their meaning is on {@link CommandRecord}).
 */
export type RunOrigin = { commandType: "SCHEDULED" | "BACKFILL" | "START_WORKFLOW" } & Pick<
  CommandRecord,
  | "scheduleTime"
  | "timezone"
  | "scheduleId"
  | "backfillId"
  | "triggerId"
  | "triggerCause"
  | "notBefore"
  | "parent"
  | "depth"
>;

/** The START command of a run of `workflow` version `version` (PENDING, `start:<instanceId>`). */
export function startCommand(
  instanceId: string,
  workflow: string,
  version: number,
  run: RunRequest,
  origin: RunOrigin,
  now: number,
): CommandRecord {
  return {
    commandId: startCommandId(instanceId),
    type: origin.commandType,
    instanceId,
    workflow,
    version,
    state: "PENDING",
    run,
    ...(origin.parent ? { parent: origin.parent } : {}),
    ...(origin.depth !== undefined ? { depth: origin.depth } : {}),
    createdAt: now,
    ...(origin.scheduleTime !== undefined ? { scheduleTime: origin.scheduleTime } : {}),
    ...(origin.timezone ? { timezone: origin.timezone } : {}),
    ...(origin.scheduleId ? { scheduleId: origin.scheduleId } : {}),
    ...(origin.backfillId ? { backfillId: origin.backfillId } : {}),
    ...(origin.triggerId ? { triggerId: origin.triggerId } : {}),
    ...(origin.triggerCause ? { triggerCause: origin.triggerCause } : {}),
    ...(origin.notBefore !== undefined ? { notBefore: origin.notBefore } : {}),
  };
}

/**
 * Who submits a command, which decides what a command found there already and a failed signal
 * mean:
 * - `api`: a request. Only a command this call wrote is signalled (a repeated request is answered
 *   from the command that exists); a failed signal is logged, the sweeper sends it again.
 * - `redo`: a submission that may redo one a crash cut short between write and signal: a
 *   schedule fire, a trigger's run, a serial or backfill step. A command found there still
 *   PENDING is signalled again; a failed signal is logged, the sweeper sends it again.
 * - `dispatcher`: a decision inside a dispatcher step. Always signalled (the step may be the redo
 *   of one whose signal was lost), and a failed signal throws, so that the step's message is
 *   delivered again and redoes both.
 */
export type Submitter = "api" | "redo" | "dispatcher";

/** The log line of a failed signal, by submitter (the lines operators already search for). */
const SIGNAL_FAILED: Record<Exclude<Submitter, "dispatcher">, string> = {
  api: "api: signalling the dispatcher failed; the sweeper will retry",
  redo: "scheduling: signal failed; the sweeper will retry",
};

/**
 * Writes the command (`attribute_not_exists`: one that exists is left as it is), then signals the
 * dispatcher as `from` says; a command with a `notBefore` ahead is signalled with that delay.
 * @returns whether this call wrote it (false: it was there already).
 * @throws the store's errors; the queue's too when `from` is `dispatcher`.
 */
export async function submitCommand(
  deps: OutboxDeps,
  cmd: CommandRecord,
  from: Submitter,
): Promise<boolean> {
  const written = await deps.store.putCommand(cmd);
  if (from === "dispatcher") {
    await signal(deps, cmd);
    return written;
  }
  const again =
    !written &&
    from === "redo" &&
    (await deps.store.getCommand(cmd.commandId))?.state === "PENDING";
  if (!written && !again) return written;
  try {
    await signal(deps, cmd);
  } catch (e) {
    deps.log?.(SIGNAL_FAILED[from], {
      commandId: cmd.commandId,
      error: String(e),
    });
  }
  return written;
}

/** The event that tells the dispatcher to claim a command. */
export function commandSignal(
  cmd: Pick<CommandRecord, "commandId" | "instanceId">,
): Extract<DispatcherMessage, { kind: "command" }> {
  return { kind: "command", commandId: cmd.commandId, instanceId: cmd.instanceId };
}

async function signal(deps: OutboxDeps, cmd: CommandRecord): Promise<void> {
  const wait = cmd.notBefore !== undefined ? cmd.notBefore - deps.now() : 0;
  // Ahead of its time: SQS delays the signal (the events FIFO queue cannot delay one).
  if (wait > 0) await deps.queues.sendDelayedSignal(commandSignal(cmd), wait / 1000);
  else await deps.queues.sendToDispatcher([commandSignal(cmd)]);
}

/**
 * A workflow's head, read once per caller's batch: `heads` (by workflow) keeps the first read's
 * promise, so a sweep reads each workflow's head once instead of once per fire.
 */
export function cachedHead(
  store: Pick<Store, "getWorkflowHead">,
  workflow: string,
  heads?: Map<string, Promise<WorkflowHead | undefined>>,
): Promise<WorkflowHead | undefined> {
  let read = heads?.get(workflow);
  if (!read) {
    read = store.getWorkflowHead(workflow);
    heads?.set(workflow, read);
  }
  return read;
}

/**
 * Starts a run of the workflow's latest version for a schedule, backfill or trigger: writes its
 * START command (idempotent: a command that exists is left as it is) and signals the dispatcher
 * (`redo` submission).
 * @param heads heads read in this sweep, by workflow (see {@link cachedHead}).
 * @returns "started" (or already was), "missing" (workflow deleted) or "offline" (it refuses runs).
 */
export async function submitRun(
  deps: OutboxDeps,
  instanceId: string,
  workflow: string,
  run: RunRequest,
  origin: RunOrigin,
  heads?: Map<string, Promise<WorkflowHead | undefined>>,
): Promise<"started" | "missing" | "offline"> {
  const head = await cachedHead(deps.store, workflow, heads);
  if (!head || head.deleted) return "missing";
  if (head.releaseState !== "ONLINE") return "offline";
  const cmd = startCommand(instanceId, workflow, head.latestVersion, run, origin, deps.now());
  await submitCommand(deps, cmd, "redo");
  return "started";
}

/**
 * The sweeper's half of the outbox: signals again the commands left PENDING longer than
 * `resignalMs` (a lost signal, a crash between write and signal), at most `limit` per call.
 * Backs off: the n-th signal of one command waits 2^n periods (capped at 32) after the last one;
 * a command whose `notBefore` is ahead is left to its delayed signal.
 * @returns how many were signalled.
 */
export async function resignalStaleCommands(
  deps: OutboxDeps,
  resignalMs: number,
  limit: number,
): Promise<number> {
  const { store, queues } = deps;
  const stale = await store.listPendingCommands(deps.now() - resignalMs, limit);
  const now = deps.now();
  let sent = 0;
  for (const cmd of stale) {
    if (cmd.notBefore !== undefined && cmd.notBefore > now) continue; // its delayed signal waits
    const n = cmd.resignals ?? 0;
    const since = now - (cmd.lastSignalAt ?? cmd.createdAt);
    if (since < resignalMs * Math.min(32, 2 ** n)) continue;
    sent++;
    const resignal = n + 1;
    await store.markResignalled(cmd.commandId, resignal, now);
    // A new deduplication id (resignal count), or SQS would drop it as a repeat for 5 minutes.
    await queues.sendToDispatcher([{ ...commandSignal(cmd), resignal }]);
    deps.log?.("sweeper: command signalled again", { commandId: cmd.commandId, resignal });
  }
  return sent;
}

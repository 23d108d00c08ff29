/**
 * The promise of a 202 to a stop or a pause: once the API has answered it, no attempt of the
 * instance that had not started may start (pause) or run on (stop), whatever crashes before the
 * dispatcher carries the command out (docs/reliability.md, "Stop and pause are promises").
 *
 * The dispatcher ends the attempts still SUBMITTED or DISPATCHED when it applies the command
 * (halts.ts), but a dispatcher that died, or a restarted standalone whose worker is faster than
 * its dispatcher, lets a queued task message be claimed first. So the command is named in the
 * instance's halt marker before the 202 ({@link submitHalt}; lib/store/dynamo-halt-markers.ts),
 * and a worker checks the marker AFTER its claim and before it starts the task
 * ({@link awaitPromisedHalt}). Claim-then-check linearises with command-then-marker: a claim
 * written before the marker counts as started when the 202 was sent (the halt treats the attempt
 * as running: a stop kills it, a pause lets it finish); a claim written after it sees the marker.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Queues } from "../queue/queues.js";
import type { CommandRecord } from "../store/records.js";
import type { HaltCommandType, Store, TaskAttemptKey } from "../store/store.js";
import { KILLED_ON_REQUEST } from "../tasks/plugin.js";
import { commandSignal, type OutboxDeps, type Submitter, submitCommand } from "./commands.js";

/** The error of an attempt that a pause ended before its task started (also haltActive's). */
export const PAUSED_BEFORE_START = "paused before it started";

/** How often a worker holding an attempt reads the marker and its commands again, at most, ms. */
const HALT_POLL_MS = 1_000;

/** Whether a command is a STOP or a PAUSE, which the instance's halt marker names. */
export function isHaltCommand(
  cmd: CommandRecord,
): cmd is CommandRecord & { type: HaltCommandType } {
  return cmd.type === "STOP" || cmd.type === "PAUSE";
}

/**
 * Submits a STOP or PAUSE ({@link submitCommand}), then names it in the instance's halt marker:
 * once this returns, a worker that claims an attempt of the instance holds it until the command
 * is carried out. The marker is written after the command, so it never names a command that does
 * not exist yet while an earlier one of the same type waits.
 * @returns whether this call wrote the command (as submitCommand).
 * @throws the store's errors (and the queue's, as submitCommand, for `dispatcher`).
 */
export async function submitHalt(
  deps: OutboxDeps,
  cmd: CommandRecord & { type: HaltCommandType },
  from: Submitter,
): Promise<boolean> {
  const written = await submitCommand(deps, cmd, from);
  await deps.store.markHalt(cmd.instanceId, cmd.type, cmd.commandId, deps.now());
  return written;
}

/** What the gate needs of the worker's dependencies (lib/engine/worker.ts). */
export interface HaltGateDeps {
  store: Store;
  queues: Queues;
  now: () => number;
  /** The worker's lease renewal period, ms: the gate polls at least this often. */
  leaseRenewMs: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * What a worker does with an attempt it has just claimed: `run` it; drop it (`lost`: it is no
 * longer RUNNING under this worker); end it as a promised halt says, without starting it; or
 * `aborted` (its kill signal fired while it was held: a kill request, a lost lease, a shutdown).
 */
export type GateVerdict =
  | "run"
  | "lost"
  | "aborted"
  | { state: "PAUSED" | "KILLED"; error: string };

/**
 * Holds a claimed attempt while a STOP or PAUSE its instance's marker names is PENDING, then
 * decides from what the command did. The first check is one strongly consistent read (the
 * marker); only an attempt whose halt is pending waits. While it waits the worker keeps its lease
 * as for a running task (attempt-keeper.ts), and the command is signalled to the dispatcher at
 * once, so a restarted dispatcher need not wait for the sweeper's re-signal. Once no named command
 * is pending:
 * - a `killRequested` on the attempt (a stop, the workflow timeout, END: halts.ts found it
 *   RUNNING) ends it KILLED with that reason;
 * - an instance PAUSING or PAUSED ends it PAUSED: a pause lets RUNNING attempts finish, and this
 *   one never started (its event makes the instance PAUSED; a resume runs the next attempt);
 * - a RUNNING instance (the command changed nothing, or a resume came since): it runs;
 * - any other instance state ends it KILLED.
 * Store errors are not thrown: the reads are tried again each period, and the task does not start
 * until they answered.
 * @param write a line to the attempt's log.
 */
export async function awaitPromisedHalt(
  deps: HaltGateDeps,
  key: TaskAttemptKey,
  workerId: string,
  signal: AbortSignal,
  write: (line: string) => void,
): Promise<GateVerdict> {
  const { store } = deps;
  const period = Math.min(deps.leaseRenewMs, HALT_POLL_MS);
  const signalled = new Set<string>();
  /** `read` until it answers; undefined when `signal` aborts first. */
  const answer = async <T>(
    read: () => Promise<T>,
    what: string,
  ): Promise<{ value: T } | undefined> => {
    for (let first = true; ; first = false) {
      if (!first && !(await pause(period, signal))) return undefined;
      if (signal.aborted) return undefined;
      try {
        return { value: await read() };
      } catch (e) {
        deps.log?.(`worker: ${what} not read, trying again`, { ...key, error: String(e) });
      }
    }
  };
  for (let first = true; ; first = false) {
    if (!first && !(await pause(period, signal))) return "aborted";
    const read = await answer(() => store.pendingHalt(key.instanceId), "halt marker");
    if (!read) return "aborted";
    const pending = read.value;
    if (!pending) {
      if (first) return "run"; // the common case: one read
      break;
    }
    if (!signalled.has(pending.commandId)) {
      signalled.add(pending.commandId);
      write(
        `shoal: a ${pending.type.toLowerCase()} of the instance was accepted before this attempt started; it waits until the dispatcher carries it out (command ${pending.commandId})`,
      );
      await signalCommand(deps, pending);
    }
  }
  const item = await answer(
    () => store.getTaskInstance(key.instanceId, key.code, key.attempt),
    "held attempt",
  );
  if (!item) return "aborted";
  const task = item.value;
  if (task?.state !== "RUNNING" || task.worker !== workerId) return "lost";
  if (task.killRequested) return { state: "KILLED", error: task.killReason ?? KILLED_ON_REQUEST };
  const inst = await answer(() => store.getInstance(key.instanceId), "instance");
  if (!inst) return "aborted";
  const state = inst.value?.state;
  if (state === "RUNNING") {
    write("shoal: the instance is running: the attempt starts");
    return "run";
  }
  if (state === "PAUSING" || state === "PAUSED")
    return { state: "PAUSED", error: PAUSED_BEFORE_START };
  return { state: "KILLED", error: `killed: the instance is ${state ?? "gone"}` };
}

/** Waits `ms`; false when `signal` aborted first. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Signals a held attempt's command to the dispatcher. A deduplication id of its own (the
 * `resignal` field, which only feeds it): the API's signal may still be in SQS's 5-minute window.
 * A failed send is only logged: the sweeper signals the command again.
 */
async function signalCommand(deps: HaltGateDeps, cmd: CommandRecord): Promise<void> {
  try {
    await deps.queues.sendToDispatcher([{ ...commandSignal(cmd), resignal: deps.now() }]);
  } catch (e) {
    deps.log?.("worker: signalling a held attempt's command failed; the sweeper will", {
      commandId: cmd.commandId,
      error: String(e),
    });
  }
}

/**
 * Time- and event-based starts (DolphinScheduler's Quartz schedules and complement data):
 * the schedule sweeper's fire loop over its shards, serial overlap queues, backfill progress,
 * and the one way every such run starts — a command with a deterministic id, so that the same
 * nominal time (or event) can never start two runs, however many sweepers race.
 *
 * Order of writes for one fire (each idempotent, a crash anywhere is finished by the next sweep):
 * 1. the fire record `(scheduleId, nominalTime)` with `attribute_not_exists` — the ledger entry
 *    and the at-most-once guard;
 * 2. the START command `start:<deterministic instance id>` (`attribute_not_exists`), then its
 *    signal to the dispatcher;
 * 3. the schedule's `nextFireTime`, conditioned on its `rev`.
 */
import {
  decideMisfires,
  decideOverlap,
  type FireDecision,
  nextQueued,
} from "../core/fire-decisions.js";
import { deterministicId } from "../core/ids.js";
import { isFinalInstanceState, type Priority, type RunRequest } from "../core/model.js";
import { nextFireTimes, type ScheduleTiming } from "../core/schedule-time.js";
import { type MisfireOutcome, misfireEvent, type StateEvent } from "../core/state-events.js";
import type { EventPublisher } from "../events/event-publisher.js";
import type { Queues } from "../queue/sqs-queues.js";
import type { CommandRecord, InstanceRecord, WorkflowHead } from "../store/records.js";
import type {
  BackfillRecord,
  BackfillStore,
  FireStore,
  LeaseStore,
  ScheduleRecord,
  ScheduleStore,
} from "../store/schedules.js";
import type { Store } from "../store/store.js";
import { mapLimit } from "./concurrency.js";

export interface SchedulingDeps {
  store: Store;
  queues: Queues;
  schedules: ScheduleStore;
  fires: FireStore;
  leases: LeaseStore;
  backfills: BackfillStore;
  now: () => number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Where "Shoal Schedule Misfire" events go (absent: nowhere). */
  events?: EventPublisher;
}

/** What starting and advancing runs needs (no sweeper leases). */
export type RunDeps = Omit<SchedulingDeps, "leases">;

/** Shards of the due-schedules index; a schedule's shard is a hash of its id. */
export const SCHEDULE_SHARDS = 8;
/** Most sweepers that share the shards (member slots). */
export const MAX_SWEEPERS = 8;
/** Due schedules read per query, and queries per shard and sweep. */
const DUE_PAGE = 500;
const MAX_PAGES_PER_SWEEP = 40;
/** Schedules of one shard fired at once (their writes are independent). */
const FIRE_CONCURRENCY = 16;
/** Nominal times one schedule may fire in one sweep (FIRE_ALL catch-up is bounded by maxCatchup). */
const MAX_FIRES_PER_SWEEP = 1_000;

/** The shard of a schedule id (stable: FNV-1a of the id). */
export function shardOf(id: string, shards = SCHEDULE_SHARDS): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return String(h % shards);
}

/** The instance id of a schedule's nominal time (the same fire always names the same run). */
export function scheduledInstanceId(scheduleId: string, nominalTime: number): string {
  return deterministicId(`schedule\u0000${scheduleId}\u0000${nominalTime}`);
}

/** The instance id of one nominal time of a backfill. */
export function backfillInstanceId(backfillId: string, nominalTime: number): string {
  return deterministicId(`backfill\u0000${backfillId}\u0000${nominalTime}`);
}

export function timingOf(s: ScheduleRecord): ScheduleTiming {
  return {
    ...(s.cron !== undefined ? { cron: s.cron } : {}),
    ...(s.rate !== undefined ? { rate: s.rate } : {}),
    ...(s.at !== undefined ? { at: s.at } : {}),
    timezone: s.timezone,
    ...(s.startTime !== undefined ? { startTime: s.startTime } : {}),
    ...(s.endTime !== undefined ? { endTime: s.endTime } : {}),
    anchor: s.startTime ?? s.createdAt,
  };
}

/** What a started run carries besides its run request. */
export interface RunOrigin {
  commandType: "SCHEDULED" | "BACKFILL" | "START_WORKFLOW";
  scheduleTime?: number;
  /** IANA zone of the run's time parameters (the schedule's or backfill's); absent: the workflow's. */
  timezone?: string;
  scheduleId?: string;
  backfillId?: string;
  triggerId?: string;
  /** Start no earlier than this (a fire within the look-ahead), epoch ms. */
  notBefore?: number;
}

/**
 * Writes the START command of a run (idempotent: a command that exists is left as it is) and
 * signals the dispatcher.
 * @returns "started" (or already was), "missing" (workflow deleted) or "offline" (it refuses runs).
 */
export async function startRun(
  deps: Pick<SchedulingDeps, "store" | "queues" | "now" | "log">,
  instanceId: string,
  workflow: string,
  run: RunRequest,
  origin: RunOrigin,
  /** Heads read in this sweep, by workflow (one read per workflow instead of per fire). */
  heads?: Map<string, Promise<WorkflowHead | undefined>>,
): Promise<"started" | "missing" | "offline"> {
  let read = heads?.get(workflow);
  if (!read) {
    read = deps.store.getWorkflowHead(workflow);
    heads?.set(workflow, read);
  }
  const head = await read;
  if (!head || head.deleted) return "missing";
  if (head.releaseState !== "ONLINE") return "offline";
  const cmd: CommandRecord = {
    commandId: `start:${instanceId}`,
    type: origin.commandType,
    instanceId,
    workflow,
    version: head.latestVersion,
    state: "PENDING",
    run,
    createdAt: deps.now(),
    ...(origin.scheduleTime !== undefined ? { scheduleTime: origin.scheduleTime } : {}),
    ...(origin.timezone ? { timezone: origin.timezone } : {}),
    ...(origin.scheduleId ? { scheduleId: origin.scheduleId } : {}),
    ...(origin.backfillId ? { backfillId: origin.backfillId } : {}),
    ...(origin.triggerId ? { triggerId: origin.triggerId } : {}),
    ...(origin.notBefore !== undefined ? { notBefore: origin.notBefore } : {}),
  };
  const written = await deps.store.putCommand(cmd);
  if (written || (await deps.store.getCommand(cmd.commandId))?.state === "PENDING") {
    try {
      const signal = { kind: "command" as const, commandId: cmd.commandId, instanceId };
      const wait = (origin.notBefore ?? 0) - deps.now();
      // Ahead of its time: SQS delays the signal (the events FIFO queue cannot delay one).
      if (wait > 0) await deps.queues.sendDelayedSignal(signal, wait / 1000);
      else await deps.queues.sendEvents([signal]);
    } catch (e) {
      // The sweeper re-signals commands left PENDING (outbox).
      deps.log?.("scheduling: signal failed; the sweeper will retry", { error: String(e) });
    }
  }
  return "started";
}

function scheduleRun(s: ScheduleRecord): RunRequest {
  return {
    params: s.params,
    ...(s.workerGroup ? { workerGroup: s.workerGroup } : {}),
    ...(s.priority ? { priority: s.priority } : {}),
    ...(s.failureStrategy ? { failureStrategy: s.failureStrategy } : {}),
    taskScope: "DOWNSTREAM",
    dryRun: false,
  };
}

/** Whether the schedule's serial run is still unfinished. */
async function serialBusy(deps: RunDeps, s: ScheduleRecord): Promise<boolean> {
  if (!s.activeInstanceId) return false;
  const inst = await deps.store.getInstance(s.activeInstanceId);
  if (inst) return !isFinalInstanceState(inst.state);
  // Not created yet: busy while its start command waits.
  return (await deps.store.getCommand(`start:${s.activeInstanceId}`))?.state === "PENDING";
}

export interface SweepResult {
  shards: string[];
  fired: number;
  skipped: number;
  queued: number;
  discarded: number;
  /**
   * Largest lateness of a fire decided in this sweep (decision time − nominal time, ms; 0 for
   * fires decided ahead through the look-ahead, and when nothing was due). The sweeper Lambda
   * reports it as a CloudWatch metric (lib/runtime/metrics.ts).
   */
  maxLatenessMs: number;
}

/**
 * One sweeper process's view: claims its fair share of the shards with leases (no leader: each
 * sweeper counts the live member slots and takes the shards `s % live == rank`), fires what is
 * due on them, and moves backfills along.
 */
export class ScheduleSweeper {
  private member?: number;
  private readonly held = new Set<string>();

  constructor(
    private readonly deps: SchedulingDeps,
    private readonly opts: {
      owner: string;
      /** A sweeper that stops renewing loses its shards after this, ms. */
      leaseMs: number;
      /** Fires due within this window are fired now, ms (0 in standalone). */
      lookaheadMs?: number;
      shards?: number;
    },
  ) {}

  /** Releases this sweeper's leases (a clean stop hands its shards over at once). */
  async stop(): Promise<void> {
    const { leases } = this.deps;
    await Promise.all(
      [...this.held].map((s) => leases.releaseLease(`shard#${s}`, this.opts.owner)),
    );
    if (this.member !== undefined)
      await leases.releaseLease(`member#${this.member}`, this.opts.owner);
    this.held.clear();
    this.member = undefined;
  }

  private lastRenewal = 0;

  /** Extends the member and shard leases when a third of their period has passed. */
  private async renewLeases(): Promise<void> {
    const t = this.deps.now();
    if (t - this.lastRenewal < this.opts.leaseMs / 3) return;
    this.lastRenewal = t;
    const { leases } = this.deps;
    const { owner, leaseMs } = this.opts;
    await Promise.all([
      ...(this.member !== undefined
        ? [leases.claimLease(`member#${this.member}`, owner, t, leaseMs)]
        : []),
      ...[...this.held].map((s) => leases.claimLease(`shard#${s}`, owner, t, leaseMs)),
    ]);
  }

  /** Which shards are this sweeper's now (claims and releases leases accordingly). */
  async claimShards(): Promise<string[]> {
    const { leases, now } = this.deps;
    const { owner, leaseMs } = this.opts;
    const shards = this.opts.shards ?? SCHEDULE_SHARDS;
    const t = now();
    this.lastRenewal = t;
    if (
      this.member !== undefined &&
      !(await leases.claimLease(`member#${this.member}`, owner, t, leaseMs))
    ) {
      this.member = undefined;
    }
    for (let k = 0; this.member === undefined && k < MAX_SWEEPERS; k++) {
      if (await leases.claimLease(`member#${k}`, owner, t, leaseMs)) this.member = k;
    }
    if (this.member === undefined) return []; // more sweepers than member slots: stand by
    const members = await Promise.all(
      Array.from({ length: MAX_SWEEPERS }, (_, k) => leases.getLease(`member#${k}`)),
    );
    const live = members.map((m, k) => (m && m.expiresAt >= t ? k : -1)).filter((k) => k >= 0);
    const rank = Math.max(0, live.indexOf(this.member));
    const mine: string[] = [];
    for (let s = 0; s < shards; s++) {
      const name = String(s);
      if (s % Math.max(1, live.length) !== rank) {
        if (this.held.delete(name)) await leases.releaseLease(`shard#${name}`, owner);
        continue;
      }
      if (await leases.claimLease(`shard#${name}`, owner, t, leaseMs)) {
        this.held.add(name);
        mine.push(name);
      } else this.held.delete(name);
    }
    return mine;
  }

  async sweep(): Promise<SweepResult> {
    const shards = await this.claimShards();
    const result: SweepResult = {
      shards,
      fired: 0,
      skipped: 0,
      queued: 0,
      discarded: 0,
      maxLatenessMs: 0,
    };
    const heads = new Map<string, Promise<WorkflowHead | undefined>>();
    await Promise.all(
      shards.map(async (shard) => {
        // Pages of due schedules until none is left (each fired schedule leaves the window).
        for (let page = 0; page < MAX_PAGES_PER_SWEEP; page++) {
          const due = await this.deps.schedules.listDue(
            shard,
            this.deps.now() + (this.opts.lookaheadMs ?? 0),
            DUE_PAGE,
          );
          await mapLimit(due, FIRE_CONCURRENCY, async (listed) => {
            try {
              await this.fireSchedule(listed.id, result, heads);
            } catch (e) {
              this.deps.log?.("sweeper: schedule not fired, next sweep goes on", {
                scheduleId: listed.id,
                error: String((e as Error)?.stack ?? e),
              });
            }
          });
          if (due.length < DUE_PAGE) break;
          await this.renewLeases(); // a long backlog must not outlast the leases
        }
      }),
    );
    // Backfills are few and move on instance ends too; the first member keeps them going.
    if (this.member === 0 || shards.includes("0")) await advanceBackfills(this.deps);
    return result;
  }

  /** Fires every due nominal time of one schedule, then advances it (conditional on rev). */
  private async fireSchedule(
    id: string,
    result: SweepResult,
    heads: Map<string, Promise<WorkflowHead | undefined>>,
  ): Promise<void> {
    const { schedules, fires, now } = this.deps;
    const s = await schedules.getSchedule(id);
    if (s?.state !== "ONLINE" || s.nextFireTime === undefined) return;
    const t = now();
    const horizon = t + (this.opts.lookaheadMs ?? 0);
    if (s.nextFireTime > horizon) return;
    const timing = timingOf(s);
    const times = [s.nextFireTime];
    while (times.length < MAX_FIRES_PER_SWEEP) {
      const [n] = nextFireTimes(timing, times[times.length - 1] as number, 1);
      if (n === undefined || n > horizon) break;
      times.push(n);
    }
    // An OFFLINE or deleted workflow's schedules do not fire (API-v1.md): its nominal times pass.
    let read = heads.get(s.workflow);
    if (!read) {
      read = this.deps.store.getWorkflowHead(s.workflow);
      heads.set(s.workflow, read);
    }
    const head = await read;
    const fireable = head !== undefined && !head.deleted && head.releaseState === "ONLINE";
    const decided = !fireable
      ? []
      : decideMisfires(times, t, s.misfirePolicy, s.misfireThresholdSeconds, s.maxCatchup);
    let queued = [...(s.queued ?? [])];
    let active = s.activeInstanceId;
    let busy = s.overlapPolicy === "PARALLEL" ? false : await serialBusy(this.deps, s);
    const misfires: StateEvent[] = [];
    const misfired = (nominal: number, outcome: MisfireOutcome) =>
      misfires.push(
        misfireEvent({ scheduleId: s.id, workflow: s.workflow, nominalTime: nominal, outcome }, t),
      );
    const record = async (nominal: number, decision: FireDecision, instanceId?: string) => {
      result.maxLatenessMs = Math.max(result.maxLatenessMs, t - nominal);
      const written = await fires.putFire({
        scheduleId: s.id,
        nominalTime: nominal,
        actualTime: t,
        latenessMs: Math.max(0, t - nominal),
        decision,
        ...(instanceId ? { instanceId } : {}),
      });
      if (written && (decision === "SKIPPED_MISFIRE" || decision === "DISCARDED_OVERLAP"))
        misfired(nominal, decision);
      return written ? decision : (await fires.getFire(s.id, nominal))?.decision;
    };
    for (const d of decided) {
      if (d.decision === "SKIPPED_MISFIRE") {
        await record(d.nominalTime, "SKIPPED_MISFIRE");
        result.skipped++;
        continue;
      }
      const o = decideOverlap(s.overlapPolicy, busy, queued, d.nominalTime);
      for (const drop of o.dropQueued) {
        if (await fires.updateFire(s.id, drop, "QUEUED_SERIAL", { decision: "DISCARDED_OVERLAP" }))
          misfired(drop, "DISCARDED_OVERLAP");
      }
      queued = queued.filter((q) => !o.dropQueued.includes(q));
      if (o.decision === "FIRED") {
        const instanceId = scheduledInstanceId(s.id, d.nominalTime);
        const decision = await record(d.nominalTime, "FIRED", instanceId);
        if (decision === "FIRED") {
          const started = await startRun(
            this.deps,
            instanceId,
            s.workflow,
            scheduleRun(s),
            {
              commandType: "SCHEDULED",
              scheduleTime: d.nominalTime,
              timezone: s.timezone,
              scheduleId: s.id,
              ...(d.nominalTime > t ? { notBefore: d.nominalTime } : {}),
            },
            heads,
          );
          if (started !== "started") {
            this.deps.log?.("sweeper: scheduled run not started", { scheduleId: s.id, started });
          }
          if (s.overlapPolicy !== "PARALLEL") {
            active = instanceId;
            busy = true;
          }
          result.fired++;
        }
      } else {
        const decision = await record(d.nominalTime, o.decision);
        if (decision === "QUEUED_SERIAL" && !queued.includes(d.nominalTime)) {
          queued.push(d.nominalTime);
          result.queued++;
        } else if (decision === "DISCARDED_OVERLAP") result.discarded++;
      }
    }
    const last = times[times.length - 1] as number;
    const [next] = nextFireTimes(timing, last, 1);
    const updated: ScheduleRecord = {
      ...s,
      queued,
      updatedAt: now(),
      rev: s.rev + 1,
    };
    if (next === undefined) delete updated.nextFireTime;
    else updated.nextFireTime = next;
    if (active) updated.activeInstanceId = active;
    // Lost to a concurrent change (API edit, another sweeper): the fire records already made
    // each fire at most once; the next sweep sees the schedule as it is now.
    if (misfires.length > 0) await this.deps.events?.publish(misfires);
    if (await schedules.updateSchedule(updated)) await startNextQueued(this.deps, updated);
  }
}

/**
 * A serial schedule's running instance ended: the next queued nominal time starts
 * (SERIAL_WAIT: the oldest, SERIAL_PRIORITY: the newest). Called by the dispatcher when a
 * scheduled instance ends, and by the sweeper as a safety net.
 */
export async function startNextQueued(deps: RunDeps, s0: ScheduleRecord): Promise<void> {
  let s: ScheduleRecord | undefined = s0;
  for (let round = 0; round < 3 && s; round++) {
    if (s.overlapPolicy === "PARALLEL" || !s.queued?.length) return;
    if (await serialBusy(deps, s)) return;
    const nominal = nextQueued(s.overlapPolicy, s.queued);
    if (nominal === undefined) return;
    const instanceId = scheduledInstanceId(s.id, nominal);
    // Ledger first (QUEUED_SERIAL → FIRED), then the run, then the schedule.
    await deps.fires.updateFire(s.id, nominal, "QUEUED_SERIAL", {
      decision: "FIRED",
      instanceId,
      actualTime: deps.now(),
      latenessMs: Math.max(0, deps.now() - nominal),
    });
    const fire = await deps.fires.getFire(s.id, nominal);
    if (fire?.decision === "FIRED" && fire.instanceId === instanceId) {
      await startRun(deps, instanceId, s.workflow, scheduleRun(s), {
        commandType: "SCHEDULED",
        scheduleTime: nominal,
        timezone: s.timezone,
        scheduleId: s.id,
      });
    }
    const next: ScheduleRecord = {
      ...s,
      queued: s.queued.filter((q) => q !== nominal),
      activeInstanceId: instanceId,
      updatedAt: deps.now(),
      rev: s.rev + 1,
    };
    if (await deps.schedules.updateSchedule(next)) return;
    s = await deps.schedules.getSchedule(s.id);
  }
}

/** A backfill's run request for one nominal time. */
function backfillRun(b: BackfillRecord): RunRequest {
  return {
    params: b.params,
    priority: b.priority,
    ...(b.failureStrategy ? { failureStrategy: b.failureStrategy } : {}),
    taskScope: "DOWNSTREAM",
    dryRun: false,
  };
}

/**
 * Moves one backfill on: counts the runs that ended, starts the next nominal times up to its
 * parallelism (SERIAL: one at a time), and ends it when every nominal time ran. Each nominal
 * time's run has a deterministic id, so a repeated step starts nothing twice.
 */
export async function advanceBackfill(deps: RunDeps, id: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const b = await deps.backfills.getBackfill(id);
    if (!b || (b.state !== "RUNNING" && b.state !== "PAUSED" && b.state !== "CANCELLED")) return;
    let { done, failed } = b;
    const running: string[] = [];
    for (const instanceId of b.running) {
      const inst = await deps.store.getInstance(instanceId);
      if (inst && isFinalInstanceState(inst.state)) {
        if (inst.state === "SUCCESS") done++;
        else failed++;
      } else running.push(instanceId);
    }
    let next = b.next;
    const started: Array<[string, number]> = [];
    if (b.state === "RUNNING") {
      const limit = b.mode === "SERIAL" ? 1 : Math.max(1, b.parallelism);
      while (running.length + started.length < limit && next < b.nominalTimes.length) {
        const nominal = b.nominalTimes[next] as number;
        started.push([backfillInstanceId(b.id, nominal), nominal]);
        next++;
      }
    }
    const nowRunning = [...running, ...started.map(([i]) => i)];
    let state: BackfillRecord["state"] = b.state;
    if (nowRunning.length === 0 && (next >= b.nominalTimes.length || b.state === "CANCELLED")) {
      if (b.state !== "CANCELLED") state = failed > 0 ? "FAILURE" : "SUCCESS";
    }
    const unchanged =
      state === b.state &&
      next === b.next &&
      done === b.done &&
      failed === b.failed &&
      nowRunning.length === b.running.length;
    if (unchanged) return;
    // Runs first (idempotent), then the record that counts them. A run that cannot start (the
    // workflow went OFFLINE or was deleted) counts as failed instead of waiting for ever.
    for (const [instanceId, nominal] of started) {
      const r = await startRun(deps, instanceId, b.workflow, backfillRun(b), {
        commandType: "BACKFILL",
        scheduleTime: nominal,
        ...(b.timezone ? { timezone: b.timezone } : {}),
        backfillId: b.id,
      });
      if (r !== "started") {
        nowRunning.splice(nowRunning.indexOf(instanceId), 1);
        failed++;
      }
    }
    if (nowRunning.length === 0 && next >= b.nominalTimes.length && state === "RUNNING") {
      state = failed > 0 ? "FAILURE" : "SUCCESS";
    }
    const updated: BackfillRecord = {
      ...b,
      state,
      next,
      done,
      failed,
      running: nowRunning,
      updatedAt: deps.now(),
      rev: b.rev + 1,
    };
    if (await deps.backfills.updateBackfill(updated)) return;
  }
}

/** Moves every active backfill on (the sweeper's safety net; instance ends do it at once). */
export async function advanceBackfills(deps: RunDeps): Promise<void> {
  const active = await deps.backfills.listActiveBackfills(100);
  for (const b of active) {
    try {
      await advanceBackfill(deps, b.id);
    } catch (e) {
      deps.log?.("sweeper: backfill not advanced", { backfillId: b.id, error: String(e) });
    }
  }
}

/** The dispatcher's hook when an instance ends: serial schedules and backfills move on. */
export async function onRunFinished(deps: RunDeps, inst: InstanceRecord): Promise<void> {
  if (inst.scheduleId) {
    const s = await deps.schedules.getSchedule(inst.scheduleId);
    if (s && s.activeInstanceId === inst.instanceId) await startNextQueued(deps, s);
  }
  if (inst.backfillId) await advanceBackfill(deps, inst.backfillId);
}

/** LOW: backfills yield to live runs (DolphinScheduler gives complement data no priority boost). */
export const DEFAULT_BACKFILL_PRIORITY: Priority = "LOW";

/**
 * The schedule sweeper (DolphinScheduler's Quartz): claims its share of the due-schedules
 * index's shards with leases, fires what is due on them, and keeps backfills moving. A fire's
 * run has a deterministic id, so that the same nominal time can never start two runs, however
 * many sweepers race.
 *
 * Order of writes for one fire (each idempotent, a crash anywhere is finished by the next sweep):
 * 1. the fire record `(scheduleId, nominalTime)` with `attribute_not_exists` — the ledger entry
 *    and the at-most-once guard;
 * 2. the START command (lib/engine/commands.ts, `attribute_not_exists`), then its signal to the
 *    dispatcher;
 * 3. the schedule's `nextFireTime`, conditioned on its `rev`.
 */
import pLimit from "p-limit";
import { decideMisfires, decideOverlap, type FireDecision } from "../core/fire-decisions.js";
import { nextFireTimes } from "../core/schedule-time.js";
import {
  type MisfireOutcome,
  type StateChangeEvent,
  scheduleMisfireEvent,
} from "../core/state-events.js";
import type { WorkflowHead } from "../store/records.js";
import { SCHEDULE_SHARDS, type ScheduleRecord, timingOf } from "../store/schedules.js";
import { advanceBackfills } from "./backfill-progress.js";
import { cachedHead, submitRun } from "./commands.js";
import { scheduledInstanceId, scheduleRun, serialBusy, startNextQueued } from "./schedule-runs.js";
import type { SchedulingDeps } from "./scheduling-deps.js";

/** Most sweepers that share the shards (member slots). */
export const MAX_SWEEPERS = 8;
/** Due schedules read per query, and queries per shard and sweep. */
const DUE_PAGE = 500;
const MAX_PAGES_PER_SWEEP = 40;
/** Schedules of one shard fired at once (their writes are independent). */
const FIRE_CONCURRENCY = 16;
/** Nominal times one schedule may fire in one sweep (FIRE_ALL catch-up is bounded by maxCatchup). */
const MAX_FIRES_PER_SWEEP = 1_000;

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
          await pLimit(FIRE_CONCURRENCY).map(due, async (listed) => {
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
    // An OFFLINE or deleted workflow's schedules do not fire (docs/api.md): its nominal times pass.
    const head = await cachedHead(this.deps.store, s.workflow, heads);
    const fireable = head !== undefined && !head.deleted && head.releaseState === "ONLINE";
    const decided = !fireable
      ? []
      : decideMisfires(times, t, s.misfirePolicy, s.misfireThresholdSeconds, s.maxCatchup);
    let queued = [...(s.queued ?? [])];
    let active = s.activeInstanceId;
    let busy = s.overlapPolicy === "PARALLEL" ? false : await serialBusy(this.deps, s);
    const misfires: StateChangeEvent[] = [];
    const misfired = (nominal: number, outcome: MisfireOutcome) =>
      misfires.push(
        scheduleMisfireEvent(
          { scheduleId: s.id, workflow: s.workflow, nominalTime: nominal, outcome },
          t,
        ),
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
          const started = await submitRun(
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
    if (misfires.length > 0) await this.deps.stateChanges?.publish(misfires);
    if (await schedules.updateSchedule(updated)) await startNextQueued(this.deps, updated);
  }
}

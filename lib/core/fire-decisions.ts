/**
 * What happens to a schedule's nominal fire times: late ones (misfires, after Quartz's misfire
 * instructions, which DolphinScheduler's schedules run on) and ones that would overlap a run
 * still going (DolphinScheduler's workflow execution type: PARALLEL, SERIAL_WAIT, SERIAL_DISCARD,
 * SERIAL_PRIORITY). Pure: `now` and the schedule's state are arguments.
 */

/**
 * What a late fire does (a fire is late — misfired — when now − nominal > the threshold):
 * - SKIP: nothing; the schedule goes on with its next time (Quartz DO_NOTHING);
 * - FIRE_ONCE: the latest missed time fires, the others are skipped (Quartz FIRE_ONCE_NOW,
 *   the "smart policy" default of a cron trigger);
 * - FIRE_ALL: every missed time fires, oldest first, but at most `maxCatchup` of them — the
 *   latest (Quartz IGNORE_MISFIRE_POLICY, bounded).
 */
export const MISFIRE_POLICIES = ["SKIP", "FIRE_ONCE", "FIRE_ALL"] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

/**
 * What a fire does while an instance of the same schedule is unfinished (DolphinScheduler's
 * execution type, `t_ds_workflow_definition.execution_type` 0–3):
 * - PARALLEL: it runs alongside;
 * - SERIAL_WAIT: it waits its turn; waiting runs start oldest first;
 * - SERIAL_DISCARD: it is dropped;
 * - SERIAL_PRIORITY: it waits, and replaces any older waiting run (only the newest waits).
 */
export const OVERLAP_POLICIES = [
  "PARALLEL",
  "SERIAL_WAIT",
  "SERIAL_DISCARD",
  "SERIAL_PRIORITY",
] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/**
 * What the sweeper decided for one nominal time (the fire ledger's outcome): FIRED (a run was
 * started), SKIPPED_MISFIRE (too late under the misfire policy), DISCARDED_OVERLAP (an earlier run
 * was still going, or a newer time replaced it in the queue), QUEUED_SERIAL (waits for the running
 * one; later becomes FIRED or DISCARDED_OVERLAP).
 */
export type FireDecision = "FIRED" | "SKIPPED_MISFIRE" | "DISCARDED_OVERLAP" | "QUEUED_SERIAL";

/** One due nominal time (epoch ms) and whether it goes on to the overlap decision. */
export interface MisfireDecision {
  nominalTime: number;
  decision: "FIRE" | "SKIPPED_MISFIRE";
}

/**
 * Sorts due nominal times into fire or skip. On-time ones (now − nominal ≤ threshold) always
 * fire; misfired ones follow `policy` (see MisfirePolicy): SKIP skips them all, FIRE_ONCE fires
 * only the latest, FIRE_ALL fires the latest `maxCatchup` (0 fires none) and skips the older.
 *
 * @param due nominal times ≤ now, epoch ms, ascending; the result keeps this order.
 * @param nowMs current time, epoch ms.
 * @param thresholdSeconds lateness, seconds, beyond which a fire is a misfire (Quartz's
 *   `misfireThreshold`, 60 s by default there).
 * @param maxCatchup most misfired times FIRE_ALL fires (a whole number ≥ 0; Infinity: all).
 * @throws RangeError when thresholdSeconds or maxCatchup is negative or NaN.
 */
export function decideMisfires(
  due: number[],
  nowMs: number,
  policy: MisfirePolicy,
  thresholdSeconds: number,
  maxCatchup: number,
): MisfireDecision[] {
  if (!(thresholdSeconds >= 0)) {
    throw new RangeError(`thresholdSeconds must be ≥ 0 (got ${thresholdSeconds})`);
  }
  if (!(maxCatchup >= 0)) throw new RangeError(`maxCatchup must be ≥ 0 (got ${maxCatchup})`);
  const thresholdMs = thresholdSeconds * 1000;
  const missed = due.filter((t) => nowMs - t > thresholdMs).sort((a, b) => b - a);
  // The misfired times that fire anyway, newest first.
  const keep =
    policy === "SKIP"
      ? 0
      : policy === "FIRE_ONCE"
        ? 1
        : Math.floor(Math.min(maxCatchup, missed.length));
  const firing = new Set(missed.slice(0, keep));
  return due.map((nominalTime) => ({
    nominalTime,
    decision:
      nowMs - nominalTime <= thresholdMs || firing.has(nominalTime) ? "FIRE" : "SKIPPED_MISFIRE",
  }));
}

/** The overlap outcome of one fire, and the waiting runs it pushes out. */
export interface OverlapDecision {
  decision: FireDecision;
  /** Nominal times (epoch ms) of QUEUED_SERIAL entries to discard now (DISCARDED_OVERLAP). */
  dropQueued: number[];
}

/**
 * Decides one fire (that passed decideMisfires) against the schedule's unfinished run and its
 * waiting runs:
 * - PARALLEL → FIRED;
 * - SERIAL_WAIT → FIRED when nothing runs and nothing waits, else QUEUED_SERIAL (behind the
 *   others, so runs keep nominal order);
 * - SERIAL_DISCARD → FIRED when nothing runs, else DISCARDED_OVERLAP;
 * - SERIAL_PRIORITY → FIRED when nothing runs and nothing waits, else QUEUED_SERIAL, dropping
 *   every older waiting run (only the newest waits). A fire older than one already waiting
 *   (out of order) is itself DISCARDED_OVERLAP.
 * A nominal time already waiting stays QUEUED_SERIAL and is not dropped (a repeated decision).
 *
 * @param running whether an instance of this schedule is unfinished.
 * @param queued nominal times (epoch ms) already QUEUED_SERIAL, ascending.
 * @param nominal the fire's nominal time, epoch ms.
 */
export function decideOverlap(
  policy: OverlapPolicy,
  running: boolean,
  queued: number[],
  nominal: number,
): OverlapDecision {
  const waiting = queued.length > 0;
  switch (policy) {
    case "PARALLEL":
      return { decision: "FIRED", dropQueued: [] };
    case "SERIAL_DISCARD":
      return { decision: running ? "DISCARDED_OVERLAP" : "FIRED", dropQueued: [] };
    case "SERIAL_WAIT":
      return { decision: running || waiting ? "QUEUED_SERIAL" : "FIRED", dropQueued: [] };
    case "SERIAL_PRIORITY":
      if (!running && !waiting) return { decision: "FIRED", dropQueued: [] };
      if (queued.some((q) => q > nominal)) return { decision: "DISCARDED_OVERLAP", dropQueued: [] };
      return { decision: "QUEUED_SERIAL", dropQueued: queued.filter((q) => q < nominal) };
  }
}

/**
 * The waiting nominal time (epoch ms) that starts when the running one ends, or undefined when
 * none waits: SERIAL_WAIT the oldest, SERIAL_PRIORITY the newest. PARALLEL and SERIAL_DISCARD
 * never queue; entries left from an earlier policy start oldest first so none is stranded.
 *
 * @param queued nominal times QUEUED_SERIAL (any order).
 */
export function nextQueued(policy: OverlapPolicy, queued: number[]): number | undefined {
  if (queued.length === 0) return undefined;
  const newest = policy === "SERIAL_PRIORITY";
  return queued.reduce((pick, q) => ((newest ? q > pick : q < pick) ? q : pick));
}

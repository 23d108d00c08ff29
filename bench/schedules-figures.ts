/** The figures of one run of the schedules scenario (schedules-run.ts), as the JSON file keeps them. */
import type { ProfileSummary } from "./profile.js";
import { round, type Summary } from "./stats.js";

/** Figures of one run (one sweeper count). */
export interface ScheduleRunFigures {
  schedules: number;
  sweepers: number;
  /** Every schedule has a fire record in the ledger. */
  complete: boolean;
  /** The run ended because nothing moved and nothing was listed due any more. */
  stalled: boolean;
  /**
   * Schedules without a fire record at the end, how many of them share a dynalite index entry
   * with another schedule of their shard (dynaliteIndexPrefix), and how many such losses the
   * birthday bound predicts.
   */
  neverFired: {
    count: number;
    sharingIndexEntry: number;
    expectedSharing: number;
    sample: string[];
  };
  /** Schedules per shard, by shard. */
  perShard: number[];
  creation: { ms: number; perSecond: number; pilot: number; leadMs: number; slackMs: number };
  /** Unique fire records written, and over which span (first → last record written), ms. */
  fired: number;
  firesPerSecond: number;
  /** Fire ledger: actualTime − nominalTime, ms (negative: decided within the look-ahead). */
  ledgerLatenessMs: Summary;
  /** This process's clock: fire record written − nominalTime, ms. */
  writtenLatenessMs: Summary;
  /** Signal sent (SQS accepted it) − nominalTime, ms; the run may start no earlier than nominal. */
  signalLatenessMs: Summary;
  /** Fires whose record was written within GOAL_MS of nominal, %. */
  withinGoalPct: number;
  t0ToLastFireMs: number;
  t0ToLastSignalMs: number;
  t0ToLastUpdateMs: number;
  requests: {
    total: number;
    perFire: number;
    dynamodbPerFire: number;
    sqsPerFire: number;
    byOperationPerFire: Record<string, number>;
  };
  /** Request latency (client side, incl. queueing in the SDK's socket pool), ms, by operation. */
  latencyMs: Record<string, Summary & { totalMs: number }>;
  /** Mean requests under way (Little's law: Σ latency ÷ window). */
  meanInFlight: number;
  cpu: {
    windowMs: number;
    benchPct: number;
    dynalitePct: number;
    fauxqsPct: number;
    othersPct: number;
    othersBeforePct: number;
    eventLoopUtilization: number;
    /** CPU ms per fire of each process. */
    perFireMs: { bench: number; dynalite: number; fauxqs: number };
    /**
     * Fires/s these costs allow: each single-threaded process alone on a core, and all three
     * sharing this machine's cores with nothing else running.
     */
    ceilingFiresPerSecond: { bench: number; dynalite: number; machine: number };
  };
  sweeps: {
    count: number;
    durationMs: Summary;
    /** putFire calls that found the record already there (another sweeper fired it). */
    duplicateFireWrites: number;
    /** getSchedule found the schedule no longer due (already fired; the index lagged). */
    staleReads: number;
    /** Lost conditional schedule updates (another sweeper advanced it first). */
    lostUpdates: number;
    listDueQueries: number;
    /** Sweeps of one shard by two sweepers at overlapping times. */
    overlappingShardSweeps: number;
    errors: Record<string, number>;
  };
  /** Signal messages left on the signals and events queues afterwards (nobody consumes them). */
  signalsQueued: number;
  ledgerChecked: { scanned: number; fired: number; listFiresSample: number; mismatches: number };
  /** --profile: the bench process over the firing window. */
  profile?: ProfileSummary;
  /** --profile: each emulator process over its whole life (creation and firing). */
  emulatorProfiles?: Record<string, ProfileSummary & { file: string }>;
}

/**
 * stats.ts `summarize` for long lists (it spreads them into Math.max, which overflows the call
 * stack near 100,000 values): the same nearest-rank percentiles and rounding.
 */
export function summary(values: readonly number[]): Summary {
  const s = Float64Array.from(values).sort();
  const at = (p: number) =>
    s.length
      ? (s[Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length))) - 1] as number)
      : Number.NaN;
  const sum = s.reduce((a, b) => a + b, 0);
  return {
    n: s.length,
    mean: round(s.length ? sum / s.length : Number.NaN, 2),
    p50: round(at(50), 2),
    p90: round(at(90), 2),
    p99: round(at(99), 2),
    max: round(at(100), 2),
  };
}

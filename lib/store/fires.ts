/**
 * The fire-ledger port: one entry per (schedule, nominal time), written once, so a nominal time is
 * decided at most once however many sweepers race on it. Times are epoch milliseconds.
 */
import type { FireDecision } from "../core/fire-decisions.js";
import type { Page } from "./records.js";

/**
 * One entry of the fire ledger. Its key (scheduleId, nominalTime) is written once, so a nominal
 * time is decided at most once however many sweepers race on it.
 */
export interface FireRecord {
  scheduleId: string;
  /** The time the schedule said, epoch ms. */
  nominalTime: number;
  /** When the decision was taken, epoch ms. */
  actualTime: number;
  /** actualTime - nominalTime, ms. */
  latenessMs: number;
  decision: FireDecision;
  /** FIRED: the instance started (its command id is `<scheduleId>#<nominalTime>`). */
  instanceId?: string;
}

/** Fields updateFire may change (not the key). */
export type FireChanges = Partial<
  Pick<FireRecord, "decision" | "instanceId" | "actualTime" | "latenessMs">
>;

export interface ListFiresQuery {
  /** Nominal times from this, inclusive, epoch ms. */
  from?: number;
  /** Nominal times up to this, inclusive, epoch ms. */
  to?: number;
  limit: number;
  nextToken?: string;
}

export interface FireStore {
  /**
   * Records a decision if none exists for this nominal time (attribute_not_exists).
   * @returns true only for the first writer.
   */
  putFire(f: FireRecord): Promise<boolean>;
  /** Strongly consistent read. */
  getFire(scheduleId: string, nominalTime: number): Promise<FireRecord | undefined>;
  /**
   * Changes a fire whose decision is still `fromDecision` (e.g. QUEUED_SERIAL → FIRED).
   * @returns the new record, or undefined when the decision differs or the fire does not exist.
   */
  updateFire(
    scheduleId: string,
    nominalTime: number,
    fromDecision: FireDecision,
    changes: FireChanges,
  ): Promise<FireRecord | undefined>;
  /**
   * A schedule's fires by ascending nominal time (strongly consistent).
   * @throws RequestError ValidationError for a token this query did not return.
   */
  listFires(scheduleId: string, q: ListFiresQuery): Promise<Page<FireRecord>>;
}

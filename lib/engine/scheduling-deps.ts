/** What the schedule sweeper, serial schedules and backfills work with. */
import type { StateChangePublisher } from "../events/event-publisher.js";
import type { Queues } from "../queue/queues.js";
import type { BackfillStore } from "../store/backfills.js";
import type { FireStore } from "../store/fires.js";
import type { LeaseStore } from "../store/leases.js";
import type { ScheduleStore } from "../store/schedules.js";
import type { Store } from "../store/store.js";

/** Stores, queues and clock of the schedule sweeper (lib/runtime/runtime.ts builds them). */
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
  stateChanges?: StateChangePublisher;
}

/** What starting and advancing runs needs (no sweeper leases). */
export type RunDeps = Omit<SchedulingDeps, "leases">;

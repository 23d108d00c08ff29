/**
 * The cause of a run a trigger started: what its command and instance record and what the
 * instance events of that run publish as `detail.trigger` (docs/events.md), so that a run started
 * by such an event is one deeper (lib/core/trigger-events.ts cuts chains off).
 */

/** Instances a {@link TriggerCause.chain} keeps at most (the latest). */
export const MAX_CHAIN = 20;

/**
 * Why a run started by a trigger started. A sub-workflow instance of such a run carries its
 * parent's cause: it is part of the same run.
 */
export interface TriggerCause {
  /** The trigger that started the run. */
  id: string;
  /** The event that started the run. */
  eventId: string;
  /**
   * 1 for a run started by an event from outside Shoal or by an event of a run no trigger
   * started; one more for each trigger-started run on the way.
   */
  depth: number;
  /** The first event of the chain: every run it leads to counts against its budget. */
  originEventId: string;
  /** The instances whose events led to this run, oldest first (the latest {@link MAX_CHAIN}). */
  chain: string[];
}

/** Settings of the schedules scenario (schedules.ts): the goal, sizes, periods and time limits. */

/** What the issue asks for: this many schedules, each fired within GOAL_MS of its time. */
export const GOAL_SCHEDULES = 100_000;
/** ms from a schedule's nominal time to its fire record. */
export const GOAL_MS = 5_000;
/**
 * Schedules by default: 100,000 take ≈ 5 min per sweeper count on 2 cores (creation ≈ 55 s, lead
 * ≈ 35 s, firing ≈ 215 s), so the default run measures 20,000 (≈ 1.5 min per sweeper count) and
 * extrapolates; --schedules=100000 runs the goal itself.
 */
export const DEFAULT_SCHEDULES = 20_000;
/** Sweep period and look-ahead, ms (`shoal sweeper`'s and standalone's local values, `LOOKAHEAD_MS`). */
export const SWEEP_MS = 1_000;
/** How far ahead a sweep fires schedules, ms. */
export const LOOKAHEAD_MS = 1_000;
/** Concurrent putSchedule calls while creating (dynalite is one event loop: more only queue). */
export const CREATE_CONCURRENCY = 16;
/** T0 = now + expected creation time × this + LEAD_SLACK_MS (the pilot's rate may drift). */
export const CREATE_MARGIN = 1.2;
/** ms added to T0's lead beyond the expected creation time. */
export const LEAD_SLACK_MS = 10_000;
/** Nothing written for this long after T0, and nothing listed due: the run is over, ms. */
export const STALL_MS = 3_000;
/** Give up on a run this long after T0 (its figures are then partial). */
export const FIRE_DEADLINE_MS = 15 * 60_000;
/** The one ONLINE workflow every schedule starts. */
export const WORKFLOW = "bench-scheduled";

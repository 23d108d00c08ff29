/**
 * The engine's timers: what each kind does when it falls due, its id (one builder per kind) and
 * its record, a union on `kind`. The store keeps them as opaque rows (lib/store/timers.ts); the
 * sweeper (lib/engine/sweeper.ts) reads them back with {@link decodeTimer} and acts on each kind.
 *
 * Each id is stable across retries of whoever sets the timer, so setting it again overwrites the
 * same item (idempotent) and two decisions never set two timers for one thing.
 */
import type { TimerRecord } from "../store/timers.js";

/** Sends a task message held back longer than SQS's 15-minute delay (a long retry interval). */
export const RELEASE_TASK_TIMER = "release-task";
/** The workflow's `timeoutSeconds` ran out: the sweeper sends a `timeout` event. */
export const INSTANCE_TIMEOUT_TIMER = "instance-timeout";
/**
 * The dispatcher decides a logic task again: a DEPENDENT re-check, or the end of a logic task's
 * retry interval (the sweeper sends a `check` event).
 */
export const LOGIC_CHECK_TIMER = "logic-check";

interface TimerBase {
  /** See the builders below. */
  id: string;
  /** When it fires, epoch ms. */
  dueAt: number;
  instanceId: string;
}

/** A held-back task message; `payload` is its `PendingSend` (lib/engine/task-dispatch.ts), JSON. */
export interface ReleaseTaskTimer extends TimerBase {
  kind: typeof RELEASE_TASK_TIMER;
  code: string;
  attempt: number;
  payload: string;
}

/** The deadline of one run of an instance (`dueAt` = its `deadlineAt`). */
export interface InstanceTimeoutTimer extends TimerBase {
  kind: typeof INSTANCE_TIMEOUT_TIMER;
}

/** The next decision of one logic task attempt. */
export interface LogicCheckTimer extends TimerBase {
  kind: typeof LOGIC_CHECK_TIMER;
  code: string;
  attempt: number;
}

/** Every timer the engine sets. */
export type Timer = ReleaseTaskTimer | InstanceTimeoutTimer | LogicCheckTimer;

/** `release:<instanceId>:<code>:<attempt>`: sends that attempt's message. */
export function releaseTaskTimer(
  task: { instanceId: string; code: string; attempt: number },
  dueAt: number,
  payload: string,
): ReleaseTaskTimer {
  const { instanceId, code, attempt } = task;
  return {
    id: `release:${instanceId}:${code}:${attempt}`,
    dueAt,
    kind: RELEASE_TASK_TIMER,
    instanceId,
    code,
    attempt,
    payload,
  };
}

/**
 * `timeout:<instanceId>`: one per instance; a rerun's new deadline is another item (another
 * `dueAt`), and the dispatcher ignores a timeout whose deadline is not the instance's current one.
 */
export function instanceTimeoutTimer(instanceId: string, deadlineAt: number): InstanceTimeoutTimer {
  return {
    id: `timeout:${instanceId}`,
    dueAt: deadlineAt,
    kind: INSTANCE_TIMEOUT_TIMER,
    instanceId,
  };
}

/** `check:<instanceId>:<code>:<attempt>`: decides that logic task attempt again at `dueAt`. */
export function logicCheckTimer(
  task: { instanceId: string; code: string; attempt: number },
  dueAt: number,
): LogicCheckTimer {
  const { instanceId, code, attempt } = task;
  return {
    id: `check:${instanceId}:${code}:${attempt}`,
    dueAt,
    kind: LOGIC_CHECK_TIMER,
    instanceId,
    code,
    attempt,
  };
}

/**
 * A stored timer as the engine's union, or undefined for a kind this engine does not know (a
 * newer or retired kind: the sweeper logs and drops it). A field a kind needs that is missing
 * reads as it always did: code "", attempt 1, payload "{}".
 */
export function decodeTimer(t: TimerRecord): Timer | undefined {
  const base = { id: t.id, dueAt: t.dueAt, instanceId: t.instanceId };
  switch (t.kind) {
    case RELEASE_TASK_TIMER:
      return {
        ...base,
        kind: RELEASE_TASK_TIMER,
        code: t.code ?? "",
        attempt: t.attempt ?? 1,
        payload: t.payload ?? "{}",
      };
    case INSTANCE_TIMEOUT_TIMER:
      return { ...base, kind: INSTANCE_TIMEOUT_TIMER };
    case LOGIC_CHECK_TIMER:
      return { ...base, kind: LOGIC_CHECK_TIMER, code: t.code ?? "", attempt: t.attempt ?? 1 };
    default:
      return undefined;
  }
}

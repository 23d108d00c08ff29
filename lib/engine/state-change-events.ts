/**
 * Which state-change events (lib/core/state-events.ts) one dispatcher write makes: the instance's
 * own change, and one task event per attempt that ended in it. Published after the write
 * succeeded, so an event never announces a state that was not recorded.
 */
import type { TaskDefinition } from "../core/model.js";
import { attemptOf, type Progress, SLOT, type TaskOutcome } from "../core/progress.js";
import {
  instanceStateChange,
  type StateChangeEvent,
  taskStateChange,
} from "../core/state-events.js";
import type { InstanceRecord } from "../store/records.js";
import type { LoadedDefinition } from "./definitions.js";
import type { EngineDeps } from "./engine-deps.js";

/** True when `o` reports the attempt `progress` has running (not a stale or repeated report). */
export function isLiveOutcome(progress: Progress, o: TaskOutcome): boolean {
  return progress.slots[o.index] === SLOT.ACTIVE && attemptOf(progress, o.index) === o.attempt;
}

/**
 * The events of a write that took the instance from `before` to `after`.
 * @param outcomes task attempts that ended with this write (live ones only), in order.
 * @param taskEvents which task events to make (EngineDeps.taskEvents; default `all` here).
 */
export function stateChangesOf(
  before: InstanceRecord,
  after: InstanceRecord,
  def: LoadedDefinition,
  outcomes: readonly TaskOutcome[],
  now: number,
  taskEvents: NonNullable<EngineDeps["taskEvents"]> = "all",
): StateChangeEvent[] {
  const events: StateChangeEvent[] = [];
  const seen = new Set<string>();
  for (const o of outcomes) {
    const key = `${o.index}#${o.attempt}`;
    if (seen.has(key)) continue;
    if (taskEvents === "none" || (taskEvents === "unsuccessful" && o.state === "SUCCESS")) continue;
    seen.add(key);
    const task = def.definition.tasks[o.index] as TaskDefinition;
    const e = taskStateChange(
      after,
      { code: task.code, type: task.type, attempt: o.attempt, state: o.state },
      now,
    );
    // A failed attempt whose task goes on with a new one: alerting usually waits for the last.
    if (
      (o.state === "FAILURE" || o.state === "NEED_FAULT_TOLERANCE") &&
      after.progress.slots[o.index] === SLOT.ACTIVE &&
      attemptOf(after.progress, o.index) > o.attempt
    ) {
      Object.assign(e.detail, { willRetry: true });
    }
    events.push(e);
  }
  if (after.state !== before.state) {
    const failed: string[] = [];
    after.progress.slots.split("").forEach((slot, i) => {
      if (slot === SLOT.FAILURE || slot === SLOT.KILLED) failed.push(def.dag.codes[i] as string);
    });
    events.push(instanceStateChange(after, before.state, now, failed));
  }
  return events;
}

/** Publishes the events of a write (best effort: the publisher never throws). */
export async function publishChanges(
  deps: EngineDeps,
  before: InstanceRecord,
  after: InstanceRecord,
  def: LoadedDefinition,
  outcomes: readonly TaskOutcome[],
): Promise<void> {
  if (!deps.stateChanges) return;
  const events = stateChangesOf(
    before,
    after,
    def,
    outcomes,
    deps.now(),
    deps.taskEvents ?? "unsuccessful",
  );
  if (events.length > 0) await deps.stateChanges.publish(events);
}

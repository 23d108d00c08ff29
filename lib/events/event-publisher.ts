/**
 * Where state-change events go (lib/core/state-events.ts): the EventBridge bus on AWS
 * (eventbridge-publisher.ts), the in-process bus of `shoal standalone` (local-event-bus.ts), or
 * nowhere (no publisher: the engine then builds no events at all).
 *
 * Delivery is best effort by design: `publish` never throws, because the state it reports is
 * already written (DynamoDB is the record; the API always has the truth). An event can be lost if
 * a process dies between its state write and the publish, and a repeated write path can publish
 * twice; consumers should key on (instanceId, state) or (instanceId, taskCode, attempt, state).
 */
import type { StateChangeEvent } from "../core/state-events.js";

export interface StateChangePublisher {
  /**
   * Publishes the events, in order. Never throws: failures are logged by the implementation.
   * @param events at most a few hundred per call (the dispatcher publishes one step's changes).
   */
  publish(events: readonly StateChangeEvent[]): Promise<void>;
}

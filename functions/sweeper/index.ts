/** Lambda handler of the sweeper, invoked by an EventBridge schedule (rate 1 minute). */
import type { ScheduledEvent } from "../../lib/engine/lambda-events.js";
import type { SweepReport } from "../../lib/engine/sweeper.js";
import { runtime } from "../../lib/runtime/runtime.js";

export const handler = (_event: ScheduledEvent): Promise<SweepReport> => runtime().sweeper.sweep();

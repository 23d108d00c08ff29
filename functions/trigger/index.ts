/**
 * Lambda handler of event triggers: an EventBridge rule on Shoal's bus delivers matching events
 * here; every trigger whose pattern matches starts its run. A redelivered event (same `id`)
 * starts nothing twice: the run's id derives from (trigger, event id).
 */
import { deliverTriggerEvent, type TriggerOutcome } from "../../lib/api/triggers.js";
import { configFromEnv } from "../../lib/aws/config.js";
import { createRuntime } from "../../lib/runtime/runtime.js";

/** Built at cold start from the function's environment, reused while warm. */
const rt = createRuntime(configFromEnv(process.env));

export const handler = (
  event: Record<string, unknown> & { id: string },
): Promise<TriggerOutcome[]> => deliverTriggerEvent(rt.api, event);

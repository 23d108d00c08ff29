/**
 * What the alerts Lambda (functions/alerts) does with one invocation, apart from the Lambda
 * runtime so that tests drive it on the emulators:
 * - a Shoal event (the EventBridge rules): writes the deliveries it asks for, then sends those
 *   at once. A failure to write them is thrown, so that Lambda retries the asynchronous
 *   invocation (twice by default; writing is idempotent, a retry writes what is missing). A
 *   failure while sending is logged only: the records and their jobs exist, and the one-minute
 *   schedule retries them.
 * - anything else (the one-minute schedule): sends what is due.
 * Only the schedule works through the due jobs: event invocations come in bursts (one per
 * failed instance and task) and each running a whole pass would only race the others for the
 * same jobs; sending its own deliveries keeps an alert as prompt as before.
 */
import { EVENT_SOURCE } from "../core/state-events.js";
import type { Alerts } from "./alerts.js";
import type { DeliveryReport, PassOptions } from "./deliverer.js";

/** What one invocation did: its pass's report and the deliveries it created. */
export type AlertsInvocationReport = DeliveryReport & { created: number };

const EMPTY: DeliveryReport = { sent: 0, retrying: 0, failed: 0, deferred: 0 };

/**
 * Handles one invocation of the alerts function.
 * @param opts.remainingMs the invocation's time left, ms (`context.getRemainingTimeInMillis()`).
 * @throws store errors while writing an event's deliveries (Lambda then retries the event), and
 *   store errors of a scheduled pass (Lambda logs them; the next minute's pass runs again).
 */
export async function handleAlertsInvocation(
  alerts: Alerts,
  event: Record<string, unknown>,
  opts: PassOptions & { log?: (msg: string, fields?: Record<string, unknown>) => void },
): Promise<AlertsInvocationReport> {
  const pass: PassOptions = opts.remainingMs ? { remainingMs: opts.remainingMs } : {};
  if (event.source !== EVENT_SOURCE) return { ...(await alerts.deliverDue(pass)), created: 0 };
  const created = await alerts.enqueue(event);
  let report = EMPTY;
  try {
    report = await alerts.deliverCreated(created, pass);
  } catch (e) {
    opts.log?.("alerts: new deliveries left to the scheduled pass", {
      created: created.length,
      error: (e as Error).message,
    });
  }
  return { ...report, created: created.length };
}

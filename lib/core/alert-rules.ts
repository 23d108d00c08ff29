/**
 * Alert rules: which events of a workflow's instances, or of a schedule's fires, are sent to
 * which alert channels (docs/alerts.md). A rule sits in a workflow definition (`alerts`) or in a
 * schedule (`alerts`); the channels it names are deployment configuration (lib/alerts/channels.ts),
 * never stored with the rule, so a channel's URL (a credential) stays out of the store and the API.
 *
 * DolphinScheduler chooses an alert group and a `warningType` per workflow run and per schedule:
 * NONE (no rule), SUCCESS (`on: [SUCCESS]`), FAILURE (`on: [FAILURE]`) and ALL
 * (`on: [SUCCESS, FAILURE, STOPPED]`: its `isFinished()` includes STOP). Like DolphinScheduler
 * (`AlertManager.isNeedToSendWarning` skips sub-processes), a sub-workflow instance's own end is
 * not alerted: its parent's is.
 *
 * Pure: no clock, no I/O.
 */
import { z } from "zod";
import { closestName } from "./closest-name.js";
import type { ErrorDetail } from "./errors.js";

/**
 * What a rule can be `on`:
 * - SUCCESS, FAILURE, STOPPED: an instance ended in that state (FAILURE after the workflow's
 *   `timeoutSeconds` ran out is TIMEOUT instead, for a rule that lists TIMEOUT);
 * - TIMEOUT: an instance ended FAILURE because its workflow timeout ran out;
 * - TASK_RETRY_EXHAUSTED: a task attempt failed with no retry left (also when the workflow goes on
 *   with failureStrategy CONTINUE, or a CONDITIONS task handles the failure);
 * - SCHEDULE_MISFIRE: a schedule's fire started no run (misfire skipped, or overlap discarded).
 */
export const ALERT_EVENTS = [
  "SUCCESS",
  "FAILURE",
  "STOPPED",
  "TIMEOUT",
  "TASK_RETRY_EXHAUSTED",
  "SCHEDULE_MISFIRE",
] as const;
export type AlertEvent = (typeof ALERT_EVENTS)[number];

/** A channel's name: what the deployment's alert configuration calls it. */
export const CHANNEL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Limits of the `alerts` field, so that a definition or a schedule stays small. */
export const ALERT_LIMITS = { rules: 20, channelsPerRule: 10 } as const;

/** One rule: the events it is `on` and the channels they go to. */
export interface AlertRule {
  on: AlertEvent[];
  channels: string[];
}

const unique = (a: readonly string[]) => new Set(a).size === a.length;

/** Schema of one rule (the `alerts[i]` of a workflow definition or a schedule body). */
export const alertRuleSchema = z.strictObject({
  on: z
    .array(z.enum(ALERT_EVENTS, { error: `must be one of ${ALERT_EVENTS.join(", ")}` }))
    .min(1, { error: "must list at least one event" })
    .max(ALERT_EVENTS.length)
    .refine(unique, { error: "must not list the same event twice" }),
  channels: z
    .array(
      z.string().regex(CHANNEL_NAME_PATTERN, {
        error: `must match ${CHANNEL_NAME_PATTERN.source} (a channel of the alert configuration)`,
      }),
    )
    .min(1, { error: "must name at least one channel" })
    .max(ALERT_LIMITS.channelsPerRule, { error: `at most ${ALERT_LIMITS.channelsPerRule}` })
    .refine(unique, { error: "must not list the same channel twice" }),
});

/** Schema of the `alerts` field. */
export const alertRulesSchema = z
  .array(alertRuleSchema)
  .max(ALERT_LIMITS.rules, { error: `at most ${ALERT_LIMITS.rules} rules` });

/** Where a deployment's alert channels are configured, as the warnings of {@link unconfiguredChannels} say it. */
export const CHANNELS_CONFIGURED_IN =
  "standalone's --alerts FILE (or SHOAL_ALERTS), or the Shoal construct's alerts prop on AWS (docs/alerts.md)";

/** How many configured channel names a warning lists before "…". */
const LISTED_CHANNELS = 10;

/**
 * Warnings for each channel the `rules` name that is not among the deployment's `configured`
 * channels: such a rule is stored (a definition moves between deployments), but its alerts to
 * that channel fail at delivery. Each is at `alerts[i].channels[j]` and names the rule, the
 * channel, the channels there are (with the closest as "did you mean"), and where channels are
 * configured ({@link CHANNELS_CONFIGURED_IN}).
 * @param configured the deployment's channel names (lib/alerts/channels.ts, the API's
 *   `alertChannels`); an empty list warns about every channel.
 * @param where how the messages call the deployment (`this Shoal`, `the Shoal at …`).
 */
export function unconfiguredChannels(
  rules: readonly AlertRule[] | undefined,
  configured: readonly string[],
  where = "this Shoal",
): ErrorDetail[] {
  const known = new Set(configured);
  const names = [...known].sort();
  const listed =
    names.length === 0
      ? "it has none"
      : `its channels: ${names.slice(0, LISTED_CHANNELS).join(", ")}${names.length > LISTED_CHANNELS ? ", …" : ""}`;
  const out: ErrorDetail[] = [];
  (rules ?? []).forEach((rule, i) => {
    rule.channels.forEach((channel, j) => {
      if (known.has(channel)) return;
      const close = closestName(channel, names);
      out.push({
        path: `alerts[${i}].channels[${j}]`,
        message:
          `alert rule alerts[${i}] names channel '${channel}', which ${where} does not configure ` +
          `(${listed}${close ? `; did you mean '${close}'?` : ""}): its alerts to it would fail ` +
          `at delivery. Channels are configured in ${CHANNELS_CONFIGURED_IN}`,
      });
    });
  });
  return out;
}

/** Where a rule is written: the instance's workflow definition, or the schedule that started it. */
export type RuleSource = "workflow" | "schedule";

/** One alert to send: the rule (`workflow.alerts[0]`), one of its channels, and the event. */
export interface AlertMatch {
  rule: string;
  channel: string;
  event: AlertEvent;
}

/**
 * The alerts `rules` ask for when `events` happen: one per rule × channel × event the rule is on.
 * A channel named by two rules for the same event is sent once (the first rule's).
 * @param events what happened, most specific first (see {@link instanceEndEvents}).
 */
export function matchRules(
  source: RuleSource,
  rules: readonly AlertRule[] | undefined,
  events: readonly AlertEvent[],
  seen: Set<string> = new Set(),
): AlertMatch[] {
  const out: AlertMatch[] = [];
  (rules ?? []).forEach((rule, i) => {
    // One alert per rule and instance end: TIMEOUT wins over FAILURE when the rule lists both.
    const event = events.find((e) => rule.on.includes(e));
    if (!event) return;
    for (const channel of rule.channels) {
      const key = `${channel}\u0000${event}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ rule: `${source}.alerts[${i}]`, channel, event });
    }
  });
  return out;
}

/**
 * The alert events an instance's state change is, most specific first: none for a state that
 * is not final or for a sub-workflow instance (DolphinScheduler alerts the parent only).
 */
export function instanceEndEvents(i: {
  /** The instance state (lib/core/model.ts `InstanceState`; not imported: model.ts imports this). */
  state: string;
  timedOut: boolean;
  subWorkflow: boolean;
}): AlertEvent[] {
  if (i.subWorkflow) return [];
  if (i.state === "SUCCESS") return ["SUCCESS"];
  if (i.state === "STOPPED") return ["STOPPED"];
  if (i.state === "FAILURE") return i.timedOut ? ["TIMEOUT", "FAILURE"] : ["FAILURE"];
  return [];
}

/**
 * The alert events a task attempt's end is: TASK_RETRY_EXHAUSTED when it failed and the task
 * runs no further attempt (`willRetry` absent). A killed attempt (a stop, an END failure
 * elsewhere, a timeout) is the instance's story, not the task's.
 */
export function taskEndEvents(t: { state: string; willRetry?: boolean }): AlertEvent[] {
  return t.state === "FAILURE" && !t.willRetry ? ["TASK_RETRY_EXHAUSTED"] : [];
}

/**
 * The id of one delivery: stable for the same rule, channel and occurrence, so that a repeated
 * event (a redelivered message, a publish repeated after a crash) finds the delivery it made.
 * Receivers get it as the `X-Shoal-Delivery-Id` header and the `deliveryId` field to deduplicate.
 * @param occurrence what happened once: `<instanceId>.<run>` for an instance end,
 *   `<instanceId>.<run>.<task>.<attempt>` for a task, `<scheduleId>.<nominal ms>` for a misfire.
 */
export function deliveryId(occurrence: string, m: AlertMatch): string {
  // `workflow.alerts[2]` → `w2`, `schedule.alerts[0]` → `s0`.
  const rule = `${m.rule.charAt(0)}${m.rule.replace(/\D/g, "")}`;
  return `${occurrence}.${m.event}.${rule}.${m.channel}`;
}

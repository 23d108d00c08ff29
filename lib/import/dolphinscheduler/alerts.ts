/**
 * DolphinScheduler's alerting as Shoal alert rules (docs/alerts.md). DolphinScheduler sends a
 * run's alerts to one alert group (`warningGroupId`, an id: the export has no group names or
 * plugins), chosen by the schedule for scheduled runs, with `warningType` saying which ends
 * (`ProcessAlertManager.isNeedToSendWarning`: NONE, SUCCESS, FAILURE, ALL = every finished
 * state; GLOBAL = global alert events, not a run's end). Task timeouts with WARN or WARNFAILED
 * alert the same group whatever the warningType (`TaskTimeoutStateEventHandler`,
 * `AlertDao.sendTaskTimeoutAlert`). Each group becomes a channel named
 * `ds-alert-group-<id>`, which the deployment's alerts configuration must define.
 */
import { type AlertEvent, type AlertRule, CHANNEL_NAME_PATTERN } from "../../core/alert-rules.js";
import type { DsSchedule, DsTask } from "./export-format.js";
import type { NoteBook } from "./notes.js";

/** `warningType` → the events of its rule (docs/alerts.md "DolphinScheduler's warningType"). */
export const WARNING_TYPE_EVENTS: Readonly<Record<string, readonly AlertEvent[]>> = {
  SUCCESS: ["SUCCESS"],
  FAILURE: ["FAILURE"],
  ALL: ["SUCCESS", "FAILURE", "STOPPED"],
};

/** `WarningType` codes, for an export that wrote them as numbers. */
const WARNING_TYPE_CODES = ["NONE", "SUCCESS", "FAILURE", "ALL", "GLOBAL"];

/** The Shoal channel standing for DolphinScheduler's alert group `id` (> 0). */
export function alertChannel(id: number): string {
  const name = `ds-alert-group-${id}`;
  // An id is a positive integer, so the name always matches; checked so a change cannot slip.
  if (!CHANNEL_NAME_PATTERN.test(name)) throw new Error(`bad channel name ${name}`);
  return name;
}

/** The schedule's `warningType` by name (`FAILURE`), also when exported as its code (`2`). */
export function warningTypeOf(s: DsSchedule): string {
  const t = s.warningType.trim().toUpperCase();
  return /^\d$/.test(t) ? (WARNING_TYPE_CODES[Number(t)] ?? t) : t || "NONE";
}

/** The alert group a schedule's runs alert, or undefined (0, null: none). */
export function alertGroupOf(s: DsSchedule | undefined): number | undefined {
  const id = s?.warningGroupId ?? 0;
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** Task types whose timeout Shoal applies (the others' is noted as not converted). */
const TIMED_TYPES = new Set(["SHELL", "PYTHON", "HTTP", "DEPENDENT"]);

/** DolphinScheduler's task timeout strategy, WARN when the export leaves it out. */
const strategyOf = (t: DsTask) => (t.timeoutNotifyStrategy ?? "WARN").toUpperCase();

/**
 * Whether the task's timeout alerts in DolphinScheduler and fails the task in Shoal, so that
 * Shoal's nearest alert is TASK_RETRY_EXHAUSTED: WARNFAILED on any task, WARN on a DEPENDENT
 * task (Shoal's DEPENDENT timeout always fails it). A WARN timeout of a worker task stays a
 * warning in Shoal, which no alert event reports.
 */
export function timeoutAlertFails(t: DsTask): boolean {
  if (!TIMED_TYPES.has(t.taskType) || t.timeoutFlag !== "OPEN" || !(t.timeout > 0)) return false;
  const s = strategyOf(t);
  return s === "WARNFAILED" || (s === "WARN" && t.taskType === "DEPENDENT");
}

/**
 * The note of a task whose timeout alerts in DolphinScheduler (WARN, WARNFAILED): what becomes
 * of the alert. `group`: the alert group of the workflow's schedule, if any.
 */
export function noteTimeoutAlert(
  t: DsTask,
  notes: NoteBook,
  code: string,
  group: number | undefined,
): void {
  if (t.timeoutFlag !== "OPEN" || !(t.timeout > 0)) return;
  const strategy = strategyOf(t);
  if (strategy === "FAILED") return;
  if (!timeoutAlertFails(t)) {
    notes.add(
      "approximated",
      `timeout ${strategy}: the task goes on after its timeout with a warning in its log and on the task instance; Shoal has no alert for a task's timeout warning (DolphinScheduler alerts ${group ? `alert group ${group}` : "the run's alert group"})`,
      code,
    );
    return;
  }
  const what = `timeout ${strategy}: the timeout fails the task${strategy === "WARN" ? " in Shoal (DolphinScheduler lets a DEPENDENT task wait on)" : ", as in DolphinScheduler"}`;
  notes.add(
    "approximated",
    group
      ? `${what}; DolphinScheduler's timeout alert becomes the schedule's rule on TASK_RETRY_EXHAUSTED to ${alertChannel(group)}: sent when the task's last attempt fails (after its retries), for a timeout or another failure, and for every task of the workflow`
      : `${what}; DolphinScheduler alerts the run's alert group at the timeout, and this export names none (no schedule with an alert group): to be alerted, add \`alerts: [{ on: [TASK_RETRY_EXHAUSTED], channels: [CHANNEL] }]\` to the workflow`,
    code,
  );
}

/**
 * The schedule's alert rules: its `warningType` to its alert group, and TASK_RETRY_EXHAUSTED
 * to the same group when `taskTimeoutAlerts` (a task's timeout alert, {@link timeoutAlertFails}).
 * Notes what does not convert (GLOBAL, a warningType without an alert group).
 */
export function scheduleAlerts(
  s: DsSchedule,
  notes: NoteBook,
  taskTimeoutAlerts: boolean,
): AlertRule[] {
  const type = warningTypeOf(s);
  const group = alertGroupOf(s);
  const rules: AlertRule[] = [];
  const events = WARNING_TYPE_EVENTS[type];
  if (events && group) rules.push({ on: [...events], channels: [alertChannel(group)] });
  else if (events) {
    notes.add(
      "not-converted",
      `schedule warningType ${type} without an alert group (warningGroupId ${s.warningGroupId}): DolphinScheduler sends these alerts nowhere; no rule`,
    );
  } else if (type === "GLOBAL") {
    notes.add(
      "not-converted",
      "schedule warningType GLOBAL (DolphinScheduler's global alert events, for its global alert plugins): no Shoal rule; add `alerts` to the schedule if wanted",
    );
  } else if (type !== "NONE") {
    notes.add("not-converted", `schedule warningType '${s.warningType}' is unknown: no rule`);
  }
  if (taskTimeoutAlerts && group) {
    rules.push({ on: ["TASK_RETRY_EXHAUSTED"], channels: [alertChannel(group)] });
  }
  return rules;
}

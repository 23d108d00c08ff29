/**
 * The log of a task no worker ran: logic tasks (CONDITIONS, SWITCH, SUB_WORKFLOW, DEPENDENT),
 * which the dispatcher decides and which write no log, and SKIPPED tasks. Their log says what
 * was decided, from the task instance record (`branch`, `switchCase`, `subInstanceId`, `error`,
 * `warning`) and the definition, so `shoal logs` and the console show it like any other log
 * (DolphinScheduler's master writes such lines into the logic task's log). Pure.
 *
 * Lines only ever get appended as the attempt goes on (a start line, then an end line once it is
 * final), so a client following the log by line count sees each line once.
 */
import type { SkipCause } from "./branches.js";
import type { InstanceState, TaskDefinition, TaskState } from "./model.js";
import { isFinalTaskState } from "./model.js";
import { conditionReads } from "./switch-expression.js";

/** The part of a task instance record the log is made from. Times are epoch ms. */
export interface DecidedAttempt {
  state: TaskState;
  submittedAt: number;
  startedAt?: number;
  endedAt?: number;
  error?: string;
  warning?: string;
  branch?: string[];
  switchCase?: number;
  subInstanceId?: string;
}

/** What the lines are made from. */
export interface DecisionFacts {
  task: TaskDefinition;
  attempt: DecidedAttempt;
  /** CONDITIONS: the states of its upstream tasks (their current attempts). */
  upstream?: ReadonlyArray<{ code: string; state: string }>;
  /** SKIPPED: the branch decision that skipped it. */
  skipped?: SkipCause;
  /** SUB_WORKFLOW: the child instance's state, when it exists. */
  childState?: InstanceState;
  /**
   * SWITCH: the parameters as the decision read them, secret-like ones already masked; the
   * line then says the values its evaluated cases read. Absent: not known (an earlier round).
   */
  params?: Readonly<Record<string, string>>;
}

/** One log line; `at` is epoch ms. */
export interface DecisionLine {
  at: number;
  message: string;
}

const list = (codes: readonly string[]) => `[${codes.join(", ")}]`;

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((c) => b.includes(c));
}

/** The lines of the attempt's log, oldest first. */
export function decisionLines(f: DecisionFacts): DecisionLine[] {
  const { task, attempt: a } = f;
  const start = a.startedAt ?? a.submittedAt;
  const end = a.endedAt ?? start;
  const final = isFinalTaskState(a.state);
  if (a.state === "SKIPPED") {
    const s = f.skipped;
    const why = !s
      ? "skipped by a branch decision"
      : s.via.length === 0
        ? `branch not taken by ${s.by}`
        : `upstream '${s.via[0]}' was skipped (branch not taken by ${s.by})`;
    return [{ at: end, message: `SKIPPED: ${why}` }];
  }
  const lines: DecisionLine[] = [];
  switch (task.type) {
    case "CONDITIONS":
      if (a.branch) lines.push({ at: end, message: conditionsLine(f, task) });
      break;
    case "SWITCH":
      if (a.branch?.[0] !== undefined) lines.push({ at: end, message: switchLine(f, task) });
      break;
    case "SUB_WORKFLOW":
      if (a.subInstanceId) {
        lines.push({
          at: start,
          message: `SUB_WORKFLOW: started child instance ${a.subInstanceId} of workflow '${task.workflow}'`,
        });
        if (final) {
          const child = f.childState ?? (a.state === "KILLED" ? "STOPPED" : a.state);
          lines.push({
            at: end,
            message: `SUB_WORKFLOW: child instance ${a.subInstanceId} ended ${child}`,
          });
        }
      }
      break;
    case "DEPENDENT": {
      const items = task.dependence.groups.flatMap((g) =>
        g.items.map(
          (i) =>
            `workflow '${i.workflow}'${i.task ? ` task '${i.task}'` : ""} (${i.cycle} ${i.dateValue})`,
        ),
      );
      lines.push({
        at: start,
        message: `DEPENDENT: depends on ${items.join(` ${task.dependence.relation} `)}; checked every ${task.checkIntervalSeconds} s`,
      });
      if (a.state === "SUCCESS") {
        lines.push({ at: end, message: "DEPENDENT: dependencies met → SUCCESS" });
      }
      break;
    }
    default:
      break;
  }
  if (a.warning) lines.push({ at: end, message: `${task.type}: warning: ${a.warning}` });
  // How a failed or stopped attempt ended (a child's end was said above unless there is more).
  const said = task.type === "SUB_WORKFLOW" && a.subInstanceId !== undefined && !a.error;
  if (final && a.state !== "SUCCESS" && !said) {
    lines.push({ at: end, message: `${task.type}: ${a.state}${a.error ? `: ${a.error}` : ""}` });
  }
  return lines;
}

/** "CONDITIONS: upstream all succeeded → successNext [a]; skipped: [b]". */
function conditionsLine(
  f: DecisionFacts,
  task: Extract<TaskDefinition, { type: "CONDITIONS" }>,
): string {
  const taken = f.attempt.branch ?? [];
  const failed = (f.upstream ?? []).filter(
    (u) => u.state !== "SUCCESS" && u.state !== "FORCED_SUCCESS" && u.state !== "SKIPPED",
  );
  // Which list the branch is: from the record, unless both lists are the same codes.
  const success =
    sameSet(taken, task.successNext) && !sameSet(taken, task.failedNext)
      ? true
      : sameSet(taken, task.failedNext) && !sameSet(taken, task.successNext)
        ? false
        : failed.length === 0;
  const other = success ? task.failedNext : task.successNext;
  const why = success
    ? "upstream all succeeded"
    : failed.length > 0
      ? `upstream ${failed.map((u) => `'${u.code}' ${u.state}`).join(", ")}`
      : "upstream did not all succeed";
  const skipped = other.length > 0 ? `; skipped: ${list(other)}` : "";
  return `CONDITIONS: ${why} → ${success ? "successNext" : "failedNext"} ${list(taken)}${skipped}`;
}

/** "SWITCH: case 0 (`rows > 100`) true → big_load; skipped: small_load". */
function switchLine(f: DecisionFacts, task: Extract<TaskDefinition, { type: "SWITCH" }>): string {
  const taken = f.attempt.branch ?? [];
  const next = taken.join(", ");
  const targets = [
    ...new Set([...task.cases.map((c) => c.next), ...(task.defaultNext ? [task.defaultNext] : [])]),
  ];
  const others = targets.filter((t) => !taken.includes(t));
  const skipped = others.length > 0 ? `; skipped: ${others.join(", ")}` : "";
  // A dry run may take several branches (its warning line says why): no single case decided.
  if (taken.length > 1) return `SWITCH: → ${next}${skipped}`;
  const i = f.attempt.switchCase;
  const c = i !== undefined && i >= 0 ? task.cases[i] : undefined;
  // The cases evaluated: up to the one that was true, or all of them.
  const read = valuesRead(task.cases.slice(0, c ? (i as number) + 1 : undefined), f.params);
  if (c) return `SWITCH: case ${i} (\`${c.condition}\`) true → ${next}${skipped}${read}`;
  if (i === -1) return `SWITCH: no case true → default ${next}${skipped}${read}`;
  return `SWITCH: → ${next}${skipped}`;
}

/** `; values read: rows = "5", threshold = "100"` (a parameter not set: `x unset`). */
function valuesRead(
  cases: ReadonlyArray<{ condition: string }>,
  params: Readonly<Record<string, string>> | undefined,
): string {
  if (!params) return "";
  const names = [...new Set(cases.flatMap((c) => conditionReads(c.condition)))];
  if (names.length === 0) return "";
  const said = names.map((n) =>
    Object.hasOwn(params, n) ? `${n} = ${JSON.stringify(params[n])}` : `${n} unset`,
  );
  return `; values read: ${said.join(", ")}`;
}

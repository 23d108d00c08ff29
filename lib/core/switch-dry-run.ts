/**
 * A SWITCH in a dry run. Worker tasks run nothing in a dry run, so they set no OUT parameters,
 * and a condition that reads one cannot be decided. Rather than fail (a real run would have the
 * value), the dry run takes every branch the SWITCH may take and says which OUT parameters the
 * choice depends on, so that the dry run shows every task a real run could reach.
 * DolphinScheduler has no dry run that walks logic tasks; this is Shoal's own rule.
 */
import type { TaskDefinition } from "./model.js";
import { conditionReads, type SwitchCaseInput, switchEvaluator } from "./switch-expression.js";

/** `setValue(name=` in a SHELL command: a name the task may set as an OUT parameter. */
const SET_VALUE = /setValue\(\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=/g;

/**
 * Which of `tasks` (given by index, e.g. a task's ancestors) may set each OUT parameter name:
 * the `outputs` keys of HTTP, LAMBDA and STEP_FUNCTIONS tasks, and the names a SHELL command
 * writes with `setValue(name=…)` in its text. A name a SHELL task computes at run time
 * (`setValue($n=1)`) cannot be known.
 * @returns name → task codes, in `indexes` order.
 */
export function outParamSetters(
  tasks: readonly TaskDefinition[],
  indexes: Iterable<number>,
): Map<string, string[]> {
  const setters = new Map<string, string[]>();
  const add = (name: string, code: string) => {
    const list = setters.get(name) ?? [];
    if (!list.includes(code)) list.push(code);
    setters.set(name, list);
  };
  for (const i of indexes) {
    const task = tasks[i];
    if (!task) continue;
    if (task.type === "SHELL") {
      for (const m of task.command.matchAll(SET_VALUE)) add(m[1] as string, task.code);
    } else if ("outputs" in task) {
      for (const name of Object.keys(task.outputs)) add(name, task.code);
    }
  }
  return setters;
}

/** Outcome of a SWITCH in a dry run: the branches to follow, or why it fails. */
export type DryRunSwitchResult =
  | {
      /** Every branch a real run may take (one when the choice did not depend on OUT values). */
      next: string[];
      /** The case that decided (-1: defaultNext), when one did. */
      matched?: number;
      /** Why several branches are followed: the OUT parameters the choice depends on. */
      warning?: string;
    }
  | { error: string };

/**
 * Decides a SWITCH in a dry run. Cases are tried in order as {@link evaluateSwitch} does; a case
 * whose condition reads a parameter missing from `params` is undecided: its branch is possible
 * and the next cases are tried too. The first case that is true ends the search (its branch is
 * possible; later ones are unreachable), as does one that fails (a real run reaching it would
 * fail: said in the warning). `defaultNext` is possible when no case was true.
 *
 * Without an undecided case, the result is exactly evaluateSwitch's (same branch, same error).
 * @param setters from {@link outParamSetters} over the SWITCH's upstream tasks, to say which task
 *   would set a missing parameter.
 */
export function dryRunSwitch(
  cases: readonly SwitchCaseInput[],
  defaultNext: string | undefined,
  params: Readonly<Record<string, string>>,
  setters: ReadonlyMap<string, readonly string[]>,
): DryRunSwitchResult {
  const evaluate = switchEvaluator(params);
  const possible: string[] = [];
  const add = (next: string) => {
    if (!possible.includes(next)) possible.push(next);
  };
  const undecided: string[] = [];
  let stop: string | undefined;
  let ended = false;
  for (const [index, c] of cases.entries()) {
    const missing = conditionReads(c.condition).filter((n) => !Object.hasOwn(params, n));
    if (missing.length > 0) {
      undecided.push(
        `case ${index} (${c.condition}) reads ${missing.map((n) => describeMissing(n, setters)).join(", ")}`,
      );
      add(c.next);
      continue;
    }
    const value = evaluate(c.condition, index);
    if (typeof value === "object") {
      if (undecided.length === 0) return value;
      stop = `a real run that gets past them fails: ${value.error}`;
      ended = true;
      break;
    }
    if (value) {
      if (undecided.length === 0) return { next: [c.next], matched: index };
      add(c.next);
      ended = true;
      break;
    }
  }
  if (!ended) {
    if (defaultNext !== undefined) {
      if (undecided.length === 0) return { next: [defaultNext], matched: -1 };
      add(defaultNext);
    } else if (undecided.length === 0) {
      return { error: "no case matched and there is no defaultNext" };
    } else {
      stop =
        "a real run in which they are false fails: no case matched and there is no defaultNext";
    }
  }
  const warning =
    `dry run: ${undecided.join("; ")}, which the dry run does not have; ` +
    `following every branch it may take: ${possible.join(", ")}${stop ? ` (${stop})` : ""}`;
  return { next: possible, warning };
}

/** A missing parameter, with the upstream tasks that would set it. */
function describeMissing(name: string, setters: ReadonlyMap<string, readonly string[]>): string {
  const tasks = setters.get(name);
  return tasks?.length
    ? `OUT parameter ${name} of task ${tasks.join(" or ")}`
    : `parameter ${name} (which no upstream task declares; a SHELL task may set it at run time)`;
}

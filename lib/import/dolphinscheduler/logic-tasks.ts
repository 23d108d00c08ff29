/**
 * DolphinScheduler's logic tasks as Shoal's: CONDITIONS (`dependence` + `conditionResult`),
 * SWITCH (`switchResult`), SUB_PROCESS/SUB_WORKFLOW (`processDefinitionCode` /
 * `workflowDefinitionCode`) and DEPENDENT (`dependence` of `DependentItem`s). Sources: the UI's
 * `format-data.ts`, `Constants` (`DEPENDENT_WORKFLOW_CODE = 0`, `DEPENDENT_ALL_TASK_CODE = -1`),
 * `SwitchResultVo`, `DependentParameters`, `SubProcessParameters`/`SubWorkflowParameters`.
 */
import { DEPENDENT_DATE_VALUES } from "../../core/dependent.js";
import { checkSwitchExpression } from "../../core/switch-expression.js";
import { LIMITS } from "../../core/validate.js";
import { alertGroupOf, noteTimeoutAlert } from "./alerts.js";
import { DsImportError } from "./errors.js";
import { codeOf, type DsTask } from "./export-format.js";
import { PARAM_NAME } from "./names.js";
import { convertProperties } from "./params.js";
import {
  commonFields,
  minutesToSeconds,
  noteTimeoutIgnored,
  type TaskBody,
  type TaskContext,
} from "./task-common.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] =>
  Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];

function noteNotApplicable(t: DsTask, ctx: TaskContext, code: string): void {
  if (t.delayTime > 0)
    ctx.notes.add(
      "not-converted",
      `delayTime ${t.delayTime} min: Shoal cannot delay a ${t.taskType} task`,
      code,
    );
  if (t.flag === "NO")
    ctx.notes.add(
      "not-converted",
      "disabled (run flag NO): Shoal has no disabled tasks; this one runs",
      code,
    );
}

/** Shoal codes of DolphinScheduler task codes in `v` (a code or a list), noting unknown ones. */
function targets(v: unknown, ctx: TaskContext, code: string, what: string): string[] {
  const out: string[] = [];
  for (const c of list(v)) {
    const ds = codeOf(c);
    if (ds === "" || ds === "0") continue;
    const mine = ctx.codes.get(ds);
    if (mine === undefined)
      ctx.notes.add(
        "not-converted",
        `${what} names task code ${ds}, which is not in this workflow`,
        code,
      );
    else if (!out.includes(mine)) out.push(mine);
  }
  return out;
}

/**
 * CONDITIONS: Shoal takes `successNext` when every direct upstream task succeeded, else
 * `failedNext`. DolphinScheduler tests chosen tasks' states with AND/OR; when that test is
 * exactly "every upstream task SUCCESS" (or, with one upstream task, its FAILURE, whose lists
 * are then swapped) the conversion is exact, else it is noted.
 */
export function conditionsTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  const dep = isObj(t.params.dependence) ? t.params.dependence : {};
  const result = isObj(t.params.conditionResult) ? t.params.conditionResult : {};
  let successNext = targets(result.successNode, ctx, code, "successNode");
  let failedNext = targets(result.failedNode, ctx, code, "failedNode");
  failedNext = failedNext.filter((c) => !successNext.includes(c));
  const items: Array<{ task: string; status: string }> = [];
  const relations = new Set<string>([String(dep.relation ?? "AND")]);
  for (const group of list(dep.dependTaskList).filter(isObj)) {
    relations.add(String(group.relation ?? "AND"));
    for (const item of list(group.dependItemList).filter(isObj)) {
      const mine = ctx.codes.get(codeOf(item.depTaskCode));
      items.push({
        task: mine ?? codeOf(item.depTaskCode),
        status: String(item.status ?? "SUCCESS"),
      });
    }
  }
  const ups = ctx.upstreamOf(code);
  const tested = new Set(items.map((i) => i.task));
  const sameSet = tested.size === ups.length && ups.every((u) => tested.has(u));
  const allSuccess = items.every((i) => i.status === "SUCCESS");
  const single = ups.length === 1 && items.length === 1 && sameSet;
  if (single && items[0]?.status === "FAILURE") {
    [successNext, failedNext] = [failedNext, successNext];
  } else if (
    !(sameSet && allSuccess && (relations.size === 1 ? relations.has("AND") : false)) &&
    !single
  ) {
    const text = items.map((i) => `${i.task} is ${i.status}`).join(` ${[...relations].join("/")} `);
    ctx.notes.add(
      "approximated",
      `condition (${text || "no items"}): Shoal follows successNext when every direct upstream task (${ups.join(", ") || "none"}) succeeded, failedNext otherwise`,
      code,
    );
  }
  for (const next of [...successNext, ...failedNext]) ctx.addEdge(code, next);
  for (const down of ctx.downstream(code)) {
    if (!successNext.includes(down) && !failedNext.includes(down)) {
      successNext.push(down);
      ctx.notes.add(
        "approximated",
        `'${down}' follows the CONDITIONS task on no branch: it is put on successNext`,
        code,
      );
    }
  }
  if (ups.length === 0) {
    ctx.notes.add(
      "not-converted",
      "a CONDITIONS task needs an upstream task in Shoal; this one has none",
      code,
    );
  }
  noteTimeoutIgnored(t, ctx, code);
  noteNotApplicable(t, ctx, code);
  return { type: "CONDITIONS", successNext, failedNext, ...commonFields(t, ctx, code, false) };
}

/**
 * A DolphinScheduler switch condition (JavaScript with `${name}` pasted in) as CEL over
 * parameters: `"${x}"` and `${x}` become `x` (or `params["x.y"]`), `===` `==`, `!==` `!=`.
 * Undefined when the result is not a valid CEL condition.
 */
export function switchCondition(js: string): string | undefined {
  const ref = (name: string) =>
    /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `params[${JSON.stringify(name)}]`;
  const cel = js
    .replace(/(["'])\$\{([A-Za-z_][A-Za-z0-9_.]*)\}\1/g, (_m, _q, n: string) => ref(n))
    .replace(/\$\{([A-Za-z_][A-Za-z0-9_.]*)\}/g, (_m, n: string) => ref(n))
    .replace(/===/g, "==")
    .replace(/!==/g, "!=")
    .trim();
  if (cel === "" || /\$\{|\$\[/.test(cel)) return undefined;
  return checkSwitchExpression(cel) === undefined ? cel : undefined;
}

/** SWITCH: the cases in order, the default branch. */
export function switchTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  const sr = isObj(t.params.switchResult) ? t.params.switchResult : {};
  const cases: Array<{ condition: string; next: string }> = [];
  for (const [i, c] of list(sr.dependTaskList).filter(isObj).entries()) {
    const next = targets(c.nextNode, ctx, code, `case ${i}`);
    if (next.length === 0) continue;
    if (next.length > 1)
      ctx.notes.add(
        "approximated",
        `case ${i} leads to several tasks: only ${next[0]} is kept`,
        code,
      );
    const original = String(c.condition ?? "");
    let condition = switchCondition(original);
    if (condition === undefined) {
      // Fails the task when the case is evaluated, naming it: never a silent wrong branch.
      condition = `params["ds_switch_case_${i}_not_converted"] == "replace this condition"`;
      ctx.notes.add(
        "approximated",
        `case ${i} condition \`${original}\` could not be converted to CEL: the case fails the task until it is rewritten (docs/workflows.md "SWITCH")`,
        code,
      );
    }
    cases.push({ condition, next: next[0] as string });
  }
  const dflt = targets(sr.nextNode, ctx, code, "default branch");
  const out: TaskBody = { type: "SWITCH", cases };
  if (dflt[0] !== undefined) out.defaultNext = dflt[0];
  if (cases.length === 0) {
    if (dflt[0] === undefined) {
      ctx.notes.add(
        "not-converted",
        "a SWITCH with no case and no default branch: it fails when it runs",
        code,
      );
      cases.push({
        condition: 'params["ds_switch_without_cases"] == "replace this condition"',
        next: code,
      });
    } else cases.push({ condition: "true", next: dflt[0] });
  }
  for (const c of cases) if (c.next !== code) ctx.addEdge(code, c.next);
  if (dflt[0] !== undefined) ctx.addEdge(code, dflt[0]);
  const branches = new Set([...cases.map((c) => c.next), ...dflt]);
  for (const down of ctx.downstream(code)) {
    if (branches.has(down)) continue;
    if (out.defaultNext === undefined) {
      out.defaultNext = down;
      branches.add(down);
      ctx.notes.add(
        "approximated",
        `'${down}' follows the SWITCH on no branch: it becomes the default branch`,
        code,
      );
    } else {
      ctx.dropEdge(code, down);
      ctx.notes.add(
        "approximated",
        `'${down}' followed the SWITCH on no branch: that edge is dropped`,
        code,
      );
    }
  }
  if (cases.some((c) => c.next === code))
    cases.splice(0, cases.length, ...cases.filter((c) => c.next !== code));
  noteTimeoutIgnored(t, ctx, code);
  noteNotApplicable(t, ctx, code);
  return { ...out, ...commonFields(t, ctx, code, false) };
}

/**
 * SUB_PROCESS (≤ 3.2) / SUB_WORKFLOW (3.3): the child by its Shoal name when it is in the file,
 * else `ds-workflow-<code>` with a note. Its IN local parameters, and every global parameter of
 * the parent as `${name}`, become the child's startup parameters (Shoal passes nothing else).
 */
export function subWorkflowTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  const childCode = codeOf(t.params.workflowDefinitionCode ?? t.params.processDefinitionCode);
  const child = ctx.workflows.get(childCode);
  const out: TaskBody = {
    type: "SUB_WORKFLOW",
    workflow: child?.name ?? `ds-workflow-${childCode || "unknown"}`,
  };
  if (!child) {
    ctx.notes.add(
      "external",
      `runs workflow code ${childCode || "(none)"}, which is ${ctx.outside}: it is named '${out.workflow}'; import that workflow's export too, or rename it to the Shoal workflow that replaces it (it must exist before this one is applied)`,
      code,
    );
  }
  const { params } = convertProperties(
    t.params.localParams as never,
    ctx.notes,
    "local parameter",
    code,
  );
  // DolphinScheduler gives the child every global parameter of the parent, the parent's value
  // winning over the child's (ProcessServiceImpl.joinGlobalParams, 3.2.2): as startup parameters.
  for (const p of ctx.wf.globalParams) {
    if (p.direct === "IN" && PARAM_NAME.test(p.prop) && !(p.prop in params)) {
      params[p.prop] = `\${${p.prop}}`;
    }
  }
  if (Object.keys(params).length > 0) out.params = params;
  noteTimeoutIgnored(t, ctx, code);
  noteNotApplicable(t, ctx, code);
  return { ...out, ...commonFields(t, ctx, code, false) };
}

const CYCLES = ["hour", "day", "week", "month"] as const;

/**
 * DEPENDENT: items on workflows of the file name their Shoal workflow (and task); others keep
 * their place as `ds-workflow-<code>` (`ds-task-<code>`), noted, so that AND/OR keep their
 * meaning once renamed. `depTaskCode` 0 (the workflow) and -1 (all its tasks) both wait for
 * the workflow instance's own result.
 */
export function dependentTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  const dep = isObj(t.params.dependence) ? t.params.dependence : t.params;
  const groups: Array<{ relation: string; items: Obj[] }> = [];
  for (const [gi, g] of list(dep.dependTaskList).filter(isObj).entries()) {
    const items: Obj[] = [];
    for (const [ii, it] of list(g.dependItemList).filter(isObj).entries()) {
      const where = `group ${gi} item ${ii}`;
      const wfCode = codeOf(it.definitionCode);
      const taskCode = codeOf(it.depTaskCode);
      const target = ctx.workflows.get(wfCode);
      const item: Obj = { workflow: target?.name ?? `ds-workflow-${wfCode || "unknown"}` };
      if (taskCode === "-1") {
        ctx.notes.add(
          "approximated",
          `${where}: "ALL" tasks of the workflow (depTaskCode -1): waits for the workflow instance's own result`,
          code,
        );
      }
      if (taskCode !== "" && taskCode !== "0" && taskCode !== "-1") {
        item.task = target?.taskCodes.get(taskCode) ?? `ds-task-${taskCode}`;
        if (target && !target.taskCodes.has(taskCode)) {
          ctx.notes.add(
            "not-converted",
            `${where}: task code ${taskCode} is not in workflow '${target.name}'`,
            code,
          );
        }
      }
      if (!target) {
        ctx.notes.add(
          "external",
          `${where} depends on workflow code ${wfCode}${item.task ? ` (task code ${taskCode})` : ""} of project ${codeOf(it.projectCode) || "?"}, which is ${ctx.outside}: named '${item.workflow}'${item.task ? ` / '${item.task}'` : ""}; rename it to the Shoal workflow that replaces it`,
          code,
        );
      }
      let cycle = String(it.cycle ?? "day");
      let dateValue = String(it.dateValue ?? "");
      if (!(CYCLES as readonly string[]).includes(cycle)) {
        ctx.notes.add("approximated", `${where}: cycle '${cycle}' is read as 'day'`, code);
        cycle = "day";
      }
      const allowed = DEPENDENT_DATE_VALUES[cycle as (typeof CYCLES)[number]];
      if (!allowed.includes(dateValue)) {
        const replacement = dateValue === "thisMonthEnd" ? "thisMonth" : (allowed[0] as string);
        ctx.notes.add(
          "approximated",
          `${where}: date value '${dateValue}' is not Shoal's: '${replacement}' instead`,
          code,
        );
        dateValue = replacement;
      }
      item.cycle = cycle;
      item.dateValue = dateValue;
      if (it.parameterPassing === true) {
        ctx.notes.add(
          "not-converted",
          `${where}: parameterPassing (the dependency's OUT parameters are not passed in Shoal)`,
          code,
        );
      }
      items.push(item);
    }
    if (items.length > 0) groups.push({ relation: g.relation === "OR" ? "OR" : "AND", items });
  }
  if (groups.length === 0) {
    throw new DsImportError(
      `workflow '${ctx.wf.name}', task '${t.name}': the DEPENDENT task depends on nothing (no dependItemList)`,
    );
  }
  const out: TaskBody = {
    type: "DEPENDENT",
    dependence: { relation: dep.relation === "OR" ? "OR" : "AND", groups },
  };
  const interval = Number(dep.checkInterval ?? 10);
  if (Number.isFinite(interval) && interval >= 1 && interval !== 10)
    out.checkIntervalSeconds = Math.min(Math.round(interval), 3600);
  if (dep.failurePolicy === "DEPENDENT_FAILURE_WAITING") {
    ctx.notes.add(
      "approximated",
      `failure policy DEPENDENT_FAILURE_WAITING (${String(dep.failureWaitingTime ?? "?")} min): Shoal fails the task as soon as a dependency failed`,
      code,
    );
  }
  noteNotApplicable(t, ctx, code);
  const timeout: TaskBody = {};
  const seconds =
    t.timeoutFlag === "OPEN" ? minutesToSeconds(t.timeout, LIMITS.timeoutSeconds) : undefined;
  if (seconds !== undefined) {
    timeout.timeoutSeconds = seconds;
    noteTimeoutAlert(t, ctx.notes, code, alertGroupOf(ctx.wf.schedule));
  }
  return { ...out, ...commonFields(t, ctx, code, false), ...timeout };
}

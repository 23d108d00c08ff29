/**
 * What a task would do, shown before (or instead of) running it: its resolved parameters and its
 * rendered form (the SHELL command, the HTTP request, the LAMBDA payload, the STEP_FUNCTIONS
 * input, exactly as `substituteTask` makes them for the worker; for logic tasks, what they would
 * decide). Used by a dry run's worker log and by `shoal render` (Airflow's `tasks render`).
 * Pure: parameters, base time and zone are arguments.
 *
 * Secrets: headers and parameters whose names look secret (Authorization, Cookie, X-Api-Key,
 * `db_password`, `api_token`, …) show `****`. Secret parameters are replaced by `****` before the
 * task is substituted, so the rendering never holds their values in any form: masking the raw
 * value afterwards would miss it once SHELL quoting (`'pa'\''ss'`) or JSON escaping (`tok\"en`)
 * has changed it. Whether the task renders at all is decided with the real values (what a run
 * does).
 */
import { DateTime } from "luxon";
import { dateIntervals } from "../core/dependent.js";
import type { TaskDefinition, TaskType, WorkerTaskDefinition } from "../core/model.js";
import { isWorkerTaskType } from "../core/model.js";
import { ParamError, referencedParams } from "../core/params.js";
import { switchEvaluator } from "../core/switch-expression.js";
import { DEFAULT_ZONE } from "../core/time-params.js";
import { callPlaceLine } from "./aws-arn.js";
import { substituteTask } from "./substitute.js";

/** What replaces a secret. */
export const MASK = "****";

/** Names of headers and parameters whose values are secrets. */
const SECRET_NAME =
  /passw(or)?d|secret|token|api[-_.]?key|credential|authori[sz]ation|cookie|private[-_.]?key|signature/i;

/** Whether `name` (a header or a parameter) looks like it holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** A DEPENDENT item with the periods it names at the base time, ISO-8601 in the run's zone. */
export interface RenderedDependentItem {
  workflow: string;
  task?: string;
  cycle: string;
  dateValue: string;
  /** Half-open periods [from, to); each needs a successful instance. */
  periods: Array<{ from: string; to: string }>;
}

/** The rendered form of a task, by type. */
export type Rendered =
  | { type: "SHELL"; command: string }
  | { type: "HTTP"; method: string; url: string; headers: Record<string, string>; body?: string }
  | { type: "LAMBDA"; functionName: string; qualifier?: string; payload: string }
  | { type: "STEP_FUNCTIONS"; stateMachineArn: string; executionName?: string; input?: string }
  | {
      type: "SWITCH";
      /** Each case with its value now: true, false, or the error it fails with. */
      cases: Array<{ condition: string; next: string; value: boolean | string }>;
      defaultNext?: string;
    }
  | { type: "CONDITIONS"; successNext: string[]; failedNext: string[] }
  | { type: "SUB_WORKFLOW"; workflow: string; params: Record<string, string> }
  | { type: "DEPENDENT"; relation: string; items: RenderedDependentItem[] };

/** A task's rendering: what `shoal render` answers and a dry run logs. */
export interface TaskRendering {
  type: TaskType;
  /** Resolved parameters, secret-like ones masked. */
  params: Record<string, string>;
  /** What would run or be decided; absent when rendering failed (`error`). */
  rendered?: Rendered;
  /**
   * `${name}` references left as written because no parameter has that name: shell variables,
   * or OUT parameters of upstream tasks that have not run (none do before a run, or in a dry run).
   */
  unresolved: string[];
  /** Why the task cannot be rendered: what a run would fail with (bad `$[…]`, broken URL). */
  error?: string;
  /**
   * Why `rendered` is absent although a run would render the task: it does not render with its
   * secret parameters masked (a secret used as a number in shell arithmetic or as bare JSON).
   */
  hidden?: string;
}

/** Where the time parameters stand. */
export interface RenderTime {
  /** Base time of `$[…]`, epoch ms. */
  baseMs: number;
  /** IANA zone of `$[…]`; default UTC. */
  zone?: string;
}

/**
 * Renders `task` with its resolved `params` (from `taskParams`, or the message a worker got).
 * Worker tasks go through `substituteTask` as the worker does; logic tasks show what they would
 * decide with these parameters. A ParamError becomes `error`; other errors are thrown.
 *
 * A worker task is substituted twice: with the real parameters, which decides whether it renders
 * (and the error a run would fail with), and with secret parameters replaced by `****`, which is
 * what is shown. When only the masked one fails (`$((${db_token} + 1))`: `****` is no number),
 * the rendering is left out and `hidden` says why.
 */
export function renderTask(
  task: TaskDefinition,
  params: Record<string, string>,
  time: RenderTime,
): TaskRendering {
  const unresolved = unresolvedReferences(task, params);
  const secrets = secretValues(params);
  const shown = maskParams(params, secrets);
  const out: TaskRendering = { type: task.type, params: sorted(shown), unresolved };
  if (!isWorkerTaskType(task.type)) {
    try {
      out.rendered = renderLogic(task, params, shown, secrets, time);
    } catch (e) {
      if (!(e instanceof ParamError)) throw e;
      out.error = maskText(e.message, secrets);
    }
    return out;
  }
  const worker = task as WorkerTaskDefinition;
  const real = substituted(worker, params, time);
  const masked = substituted(worker, shown, time);
  if (real instanceof ParamError) {
    // The masked run's error holds no secret; the real one's is masked as well as text allows.
    out.error = masked instanceof ParamError ? masked.message : maskText(real.message, secrets);
  } else if (masked instanceof ParamError) {
    out.hidden = `not shown: with its secret parameters replaced by ${MASK} the task does not render (${masked.message}); a run renders it with their values`;
  } else {
    out.rendered = renderWorker(masked);
  }
  return out;
}

/** The substituted task, or the ParamError substitution fails with. */
function substituted(
  task: WorkerTaskDefinition,
  params: Record<string, string>,
  time: RenderTime,
): WorkerTaskDefinition | ParamError {
  try {
    return substituteTask(task, params, time.baseMs, time.zone);
  } catch (e) {
    if (e instanceof ParamError) return e;
    throw e;
  }
}

function renderWorker(t: WorkerTaskDefinition): Rendered {
  switch (t.type) {
    case "SHELL":
      return { type: "SHELL", command: t.command };
    case "HTTP": {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(t.headers)) headers[k] = isSecretName(k) ? MASK : v;
      return {
        type: "HTTP",
        method: t.method,
        url: t.url,
        headers,
        ...(t.body !== undefined ? { body: t.body } : {}),
      };
    }
    case "LAMBDA":
      return {
        type: "LAMBDA",
        functionName: t.functionName,
        ...(t.qualifier !== undefined ? { qualifier: t.qualifier } : {}),
        payload: t.payload,
      };
    case "STEP_FUNCTIONS":
      return {
        type: "STEP_FUNCTIONS",
        stateMachineArn: t.stateMachineArn,
        ...(t.executionName !== undefined ? { executionName: t.executionName } : {}),
        ...(t.input !== undefined ? { input: t.input } : {}),
      };
  }
}

/**
 * What a logic task would decide: a SWITCH with the real parameters (`params`; an error that
 * quotes a value has the secrets masked), a SUB_WORKFLOW's child parameters as `shown`.
 */
function renderLogic(
  task: TaskDefinition,
  params: Record<string, string>,
  shown: Record<string, string>,
  secrets: readonly string[],
  time: RenderTime,
): Rendered {
  switch (task.type) {
    case "SWITCH": {
      const evaluate = switchEvaluator(params);
      return {
        type: "SWITCH",
        cases: task.cases.map((c, i) => {
          const value = evaluate(c.condition, i);
          return {
            condition: c.condition,
            next: c.next,
            value: typeof value === "object" ? maskText(value.error, secrets) : value,
          };
        }),
        ...(task.defaultNext !== undefined ? { defaultNext: task.defaultNext } : {}),
      };
    }
    case "CONDITIONS":
      return { type: "CONDITIONS", successNext: task.successNext, failedNext: task.failedNext };
    case "SUB_WORKFLOW":
      // The task's own parameters (resolved) are the child's startup parameters.
      return {
        type: "SUB_WORKFLOW",
        workflow: task.workflow,
        params: Object.fromEntries(Object.keys(task.params).map((k) => [k, shown[k] ?? ""])),
      };
    case "DEPENDENT": {
      const zone = time.zone ?? DEFAULT_ZONE;
      const iso = (ms: number) => DateTime.fromMillis(ms, { zone }).toISO() ?? String(ms);
      return {
        type: "DEPENDENT",
        relation: task.dependence.relation,
        items: task.dependence.groups.flatMap((g) =>
          g.items.map((item) => ({
            workflow: item.workflow,
            ...(item.task !== undefined ? { task: item.task } : {}),
            cycle: item.cycle,
            dateValue: item.dateValue,
            periods: dateIntervals(item.dateValue, time.baseMs, zone).map((p) => ({
              from: iso(p.startMs),
              to: iso(p.endMs),
            })),
          })),
        ),
      };
    }
    default:
      throw new Error(`${task.type} is not a logic task`);
  }
}

/** The text fields in which `${name}` is substituted. */
function templates(task: TaskDefinition): string[] {
  switch (task.type) {
    case "SHELL":
      return [task.command];
    case "HTTP":
      return [task.url, ...Object.values(task.headers), task.body ?? ""];
    case "LAMBDA":
      return [task.payload];
    case "STEP_FUNCTIONS":
      return [task.input ?? "", task.executionName ?? ""];
    default:
      return [];
  }
}

function unresolvedReferences(task: TaskDefinition, params: Record<string, string>): string[] {
  const names = templates(task).flatMap((t) => referencedParams(t));
  return [...new Set(names)].filter((n) => !Object.hasOwn(params, n));
}

/**
 * The parameters as shown and as substituted for display: a secret-like name's value is
 * `****`; any other value has the secret values it holds (`dsn` = `pg://u:${db_password}@h`,
 * resolved before it gets here) masked.
 */
function maskParams(
  params: Record<string, string>,
  secrets: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    Object.defineProperty(out, name, {
      value: isSecretName(name) ? MASK : maskText(value, secrets),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The same record with its names sorted. */
function sorted(params: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(params).sort()) {
    Object.defineProperty(out, name, {
      value: params[name],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * Values of secret-like parameters, to mask inside other text (other parameters' values, error
 * messages), longest first. Values shorter than 4 characters are left alone there (masking "1"
 * everywhere would hide nothing and garble the rest); the parameters themselves are masked
 * whatever their length.
 */
function secretValues(params: Record<string, string>): string[] {
  const values = Object.entries(params)
    .filter(([k]) => isSecretName(k))
    .map(([, v]) => v);
  return [...new Set(values.filter((v) => v.length >= 4))].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every secret masked: as it is, JSON-escaped (a JSON template, an error quoting a
 * value) and its first 40 characters JSON-escaped (what SWITCH and shell-arithmetic errors
 * quote of a longer value).
 */
function maskText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    const forms = [s, JSON.stringify(s).slice(1, -1)];
    if (s.length > 40) forms.push(JSON.stringify(s.slice(0, 40)).slice(1, -1));
    for (const form of forms) out = out.split(form).join(MASK);
  }
  return out;
}

/**
 * The rendering as lines for a terminal or a task log: parameters (sorted), then what would run,
 * then unresolved references and the error, if any.
 */
export function renderingLines(r: TaskRendering): string[] {
  const lines: string[] = ["parameters:"];
  const names = Object.keys(r.params);
  if (names.length === 0) lines.push("  (none)");
  for (const name of names) lines.push(`  ${name} = ${r.params[name]}`);
  const block = (title: string, text: string) => {
    lines.push(`${title}:`);
    for (const line of text.split("\n")) lines.push(`  ${line}`);
  };
  const d = r.rendered;
  switch (d?.type) {
    case "SHELL":
      block("command", d.command);
      break;
    case "HTTP":
      lines.push("request:", `  ${d.method} ${d.url}`);
      for (const [k, v] of Object.entries(d.headers)) lines.push(`  ${k}: ${v}`);
      if (d.body !== undefined) block("body", d.body);
      break;
    case "LAMBDA":
      lines.push(`invoke: ${d.functionName}${d.qualifier ? ` (qualifier ${d.qualifier})` : ""}`);
      lines.push(callPlaceLine("Lambda", d.functionName));
      block("payload", d.payload);
      break;
    case "STEP_FUNCTIONS":
      lines.push(`start execution of: ${d.stateMachineArn}`);
      lines.push(callPlaceLine("Step Functions", d.stateMachineArn));
      if (d.executionName !== undefined) lines.push(`execution name: ${d.executionName}`);
      if (d.input !== undefined) block("input", d.input);
      break;
    case "SWITCH":
      lines.push("cases:");
      d.cases.forEach((c, i) => {
        lines.push(`  ${i}: ${c.condition} -> ${c.next}: ${String(c.value)}`);
      });
      if (d.defaultNext !== undefined) lines.push(`  default -> ${d.defaultNext}`);
      break;
    case "CONDITIONS":
      lines.push(`on success: ${d.successNext.join(", ") || "(nothing)"}`);
      lines.push(`on failure: ${d.failedNext.join(", ") || "(nothing)"}`);
      break;
    case "SUB_WORKFLOW":
      lines.push(`starts workflow: ${d.workflow}`, "with parameters:");
      if (Object.keys(d.params).length === 0) lines.push("  (none)");
      for (const [k, v] of Object.entries(d.params)) {
        lines.push(`  ${k} = ${isSecretName(k) ? MASK : v}`);
      }
      break;
    case "DEPENDENT":
      lines.push(`waits for (${d.relation}):`);
      for (const item of d.items) {
        const what = item.task ? `${item.workflow}.${item.task}` : item.workflow;
        const periods = item.periods.map((p) => `${p.from} .. ${p.to}`).join(", ");
        lines.push(`  ${what} ${item.cycle} ${item.dateValue}: ${periods}`);
      }
      break;
    default:
      break;
  }
  if (r.unresolved.length > 0) {
    lines.push(
      `left as written (no such parameter: a shell variable, or an OUT parameter of an upstream task that has not run): ${r.unresolved.map((n) => `\${${n}}`).join(", ")}`,
    );
  }
  if (r.hidden) lines.push(r.hidden);
  if (r.error) lines.push(`error: ${r.error}`);
  return lines;
}

/** How a dry run's worker task ends, from its rendering. */
export interface DryRunOutcome {
  state: "SUCCESS" | "FAILURE";
  /** FAILURE: what a real run would fail with. */
  error?: string;
  /** SUCCESS despite a rendering error that unresolved references may explain. */
  warning?: string;
}

/**
 * A dry run's verdict on a worker task: SUCCESS when it renders; FAILURE with the error a real
 * run would fail with when it does not; but SUCCESS with a warning when the error may come from
 * references a dry run cannot resolve (OUT parameters of upstream tasks, which set none in a dry
 * run), so that the dry run goes on to show the rest of the DAG.
 */
export function dryRunOutcome(r: TaskRendering): DryRunOutcome {
  if (!r.error) return { state: "SUCCESS" };
  if (r.unresolved.length === 0) return { state: "FAILURE", error: r.error };
  const refs = r.unresolved.map((n) => `\${${n}}`).join(", ");
  return {
    state: "SUCCESS",
    warning: `dry run: cannot render (${r.error}) while ${refs} is not set; a real run fails the same way unless an upstream task sets it`,
  };
}

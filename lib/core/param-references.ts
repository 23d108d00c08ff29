/**
 * Parameter references nothing in a workflow definition can set. `${name}` for a name that is
 * not a parameter stays as written at run time (params.ts), so a typo such as `${bizdat}` for
 * `${bizdate}` reaches the shell as an unset variable and nobody is told. This finds, at PUT,
 * every `${name}` in the fields Shoal substitutes (lib/tasks/substitute.ts: a SHELL command;
 * an HTTP URL, header values and body; a LAMBDA payload; a STEP_FUNCTIONS input and execution
 * name; and every parameter value, SUB_WORKFLOW params included) whose name is not a global
 * parameter, a local parameter of the task, a built-in (time-params.ts `builtinParams`), or an
 * OUT parameter of one of the task's ancestors (out-params.ts). The parameters a SWITCH
 * condition reads (switch-expression.ts `conditionReads`: `rows`, `params["system.biz.date"]`)
 * are checked the same way, except those it tests for (`"x" in params`). A run's startup
 * parameters can still set any name, so these are warnings, never errors. Pure.
 */
import { closestName } from "./closest-name.js";
import { Dag } from "./dag.js";
import type { ErrorDetail } from "./errors.js";
import type { TaskDefinition, WorkflowDefinition } from "./model.js";
import { conditionReads, conditionTests } from "./switch-expression.js";

/** The names `builtinParams` sets for a task (DolphinScheduler's basic built-in parameters). */
export const BUILTIN_PARAM_NAMES: readonly string[] = [
  "system.datetime",
  "system.biz.curdate",
  "system.biz.date",
  "system.workflow.instance.id",
  "system.workflow.definition.name",
  "system.task.definition.name",
  "system.task.instance.attempt",
];

/** `${name}`, as params.ts finds it (also inside `$[…]`, whose offsets may use references). */
const NAME_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_.]*)\}/g;
/** A literal `${setValue(name=` / `#{setValue(name=` in a SHELL command (out-params.ts). */
const SET_VALUE = /[$#]\{setValue\(\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=/g;
/** Names a shell command gives a value itself: `x=`, `export x=`, `for x in`, `read x y`. */
const SHELL_ASSIGNMENT = /(?:^|[\s;&|(`])([A-Za-z_][A-Za-z0-9_]*)\+?=/g;
const SHELL_LOOP = /\b(?:for|select)\s+([A-Za-z_][A-Za-z0-9_]*)\s/g;
const SHELL_READ = /\b(?:read|getopts)\b([^;&|\n]*)/g;
/** Upper-case names in a SHELL command: environment variables of the worker (`${HOME}`, `${JAVA_HOME}`). */
const ENVIRONMENT_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** OUT parameter names a task can set: a set, or "unknown" when they cannot be read statically. */
type OutNames = ReadonlySet<string> | "unknown";

/**
 * The OUT parameters `task` can set: an HTTP, LAMBDA or STEP_FUNCTIONS task's `outputs`; a
 * SHELL task's literal `setValue(name=…)` forms, or "unknown" when its command mentions
 * `setValue` in any other way (`setValue(${name}=…)`, a form built at run time). Logic tasks set
 * none. A script the command runs may print more: those the analysis cannot see.
 */
function outNames(task: TaskDefinition): OutNames {
  switch (task.type) {
    case "HTTP":
    case "LAMBDA":
    case "STEP_FUNCTIONS":
      return new Set(Object.keys(task.outputs));
    case "SHELL": {
      const literal = [...task.command.matchAll(SET_VALUE)].map((m) => m[1] as string);
      const mentions = task.command.split("setValue").length - 1;
      return mentions > literal.length ? "unknown" : new Set(literal);
    }
    default:
      return new Set();
  }
}

/** The OUT names a task can see: those its ancestors set, and whether one cannot be known. */
interface Inherited {
  names: ReadonlySet<string>;
  unknowable: boolean;
}

const NOTHING: Inherited = { names: new Set(), unknowable: false };

/**
 * What each task inherits from its ancestors (tasks it depends on, directly or not), by index,
 * in one pass in topological order. A task that adds nothing shares its upstream's object, so
 * a chain of 10,000 tasks that set no OUT parameters costs one empty set, not 10,000 closures.
 */
function inheritedOuts(tasks: readonly TaskDefinition[], outs: readonly OutNames[]): Inherited[] {
  const dag = new Dag(tasks);
  const inherited: Inherited[] = tasks.map(() => NOTHING);
  for (const i of dag.topologicalOrder()) {
    const parts = (dag.upstream[i] ?? []).map((u): Inherited => {
      const own = outs[u] as OutNames;
      const from = inherited[u] as Inherited;
      if (own === "unknown") return { names: from.names, unknowable: true };
      if (own.size === 0) return from;
      return { names: new Set([...from.names, ...own]), unknowable: from.unknowable };
    });
    if (parts.length === 0) continue;
    const first = parts[0] as Inherited;
    if (parts.every((p) => p === first)) {
      inherited[i] = first;
      continue;
    }
    const names = new Set<string>();
    for (const p of parts) for (const n of p.names) names.add(n);
    inherited[i] = { names, unknowable: parts.some((p) => p.unknowable) };
  }
  return inherited;
}

/** A field holding references: its path in the body and its text. */
interface Field {
  path: string;
  text: string;
}

/** The fields of `task` Shoal substitutes parameters into (lib/tasks/substitute.ts). */
function substitutedFields(task: TaskDefinition, i: number): Field[] {
  const at = (name: string) => `tasks[${i}].${name}`;
  const fields: Field[] = [];
  switch (task.type) {
    case "SHELL":
      fields.push({ path: at("command"), text: task.command });
      break;
    case "HTTP":
      fields.push({ path: at("url"), text: task.url });
      for (const [k, v] of Object.entries(task.headers)) {
        fields.push({ path: at(`headers.${k}`), text: v });
      }
      if (task.body !== undefined) fields.push({ path: at("body"), text: task.body });
      break;
    case "LAMBDA":
      fields.push({ path: at("payload"), text: task.payload });
      break;
    case "STEP_FUNCTIONS":
      if (task.input !== undefined) fields.push({ path: at("input"), text: task.input });
      if (task.executionName !== undefined) {
        fields.push({ path: at("executionName"), text: task.executionName });
      }
      break;
    default:
      break;
  }
  for (const [k, v] of Object.entries(task.params)) {
    fields.push({ path: at(`params.${k}`), text: v });
  }
  return fields;
}

/** Names a SHELL command sets itself (assignments, loop variables, `read` targets). */
function shellOwnNames(command: string): Set<string> {
  const names = new Set<string>();
  for (const m of command.matchAll(SHELL_ASSIGNMENT)) names.add(m[1] as string);
  for (const m of command.matchAll(SHELL_LOOP)) names.add(m[1] as string);
  for (const m of command.matchAll(SHELL_READ)) {
    for (const word of (m[1] as string).trim().split(/\s+/)) {
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(word)) names.add(word);
    }
  }
  return names;
}

/**
 * Whether a SHELL command's `${name}` can be the shell's own: Shoal leaves an unknown name as
 * written and the shell expands it, from the command's own variables, from the task's
 * environment (every parameter, dotted names with `_`, and `SHOAL_*`), or from the worker's
 * environment, which cannot be known here: upper-case names are taken to be environment
 * variables unless they look like a misspelt parameter.
 */
function isShellName(name: string, own: ReadonlySet<string>, known: ReadonlySet<string>): boolean {
  if (own.has(name) || name.startsWith("SHOAL_")) return true;
  for (const k of known) if (k.replaceAll(".", "_") === name) return true;
  return ENVIRONMENT_NAME.test(name) && closestName(name, known) === undefined;
}

/**
 * The `${name}` references of `def` that nothing in it can set, one warning per name and
 * field, in body order (global parameters, then each task's fields), and likewise the
 * parameters SWITCH conditions read (a name that is missing fails the task at run time). A
 * task below an ancestor whose OUT names cannot be known is not checked; a global parameter's
 * value is checked against the names any task could see (it is resolved for each task).
 * @returns details `{path, message}`, path = the field holding the reference
 *   (`tasks[2].command`, `tasks[0].headers.x-id`, `params.path`, `tasks[3].cases[0].condition`).
 */
export function unresolvedParamReferences(def: WorkflowDefinition): ErrorDetail[] {
  const tasks = def.tasks;
  const outs = tasks.map(outNames);
  const inherited = inheritedOuts(tasks, outs);
  const global = Object.keys(def.params);
  const warnings: ErrorDetail[] = [];

  // The first two tasks that set each OUT name: enough to name one other than the task itself.
  const setters = new Map<string, number[]>();
  for (const [k, o] of outs.entries()) {
    if (o === "unknown") continue;
    for (const name of o) {
      const found = setters.get(name) ?? [];
      if (found.length < 2) setters.set(name, [...found, k]);
    }
  }
  const setter = (name: string, except: ReadonlySet<number>): string | undefined => {
    const i = setters.get(name)?.find((k) => !except.has(k));
    return i === undefined ? undefined : tasks[i]?.code;
  };
  const message = (
    name: string,
    known: ReadonlySet<string>,
    other: string | undefined,
    inShell: boolean,
  ): string => {
    const where = other ? ` (task '${other}' sets it, but is not upstream of this task)` : "";
    const effect = inShell
      ? "it stays as written and the shell reads an unset variable"
      : "it stays as written";
    const close = closestName(name, known);
    const hint = close ? ` (did you mean \${${close}}?)` : "";
    return `\${${name}} is not a global, local or built-in parameter, nor an OUT parameter of an upstream task${where}; unless the run's parameters set it, ${effect}${hint}`;
  };
  /** The same for a parameter a SWITCH condition reads (a CEL variable, not a `${…}`). */
  const conditionMessage = (name: string, known: ReadonlySet<string>, self: number): string => {
    const other = setter(name, new Set([self]));
    const where = other ? ` (task '${other}' sets it, but is not upstream of this task)` : "";
    const close = closestName(name, known);
    const hint = close ? ` (did you mean ${close}?)` : "";
    return `${name} is not a global, local or built-in parameter, nor an OUT parameter of an upstream task${where}; unless the run's parameters set it, the SWITCH fails when it evaluates this case${hint}`;
  };

  /** `self`: the task whose field it is (its own OUT parameters only reach its downstream). */
  const check = (
    field: Field,
    known: ReadonlySet<string>,
    self?: number,
    shell?: ReadonlySet<string>,
  ) => {
    const names = new Set([...field.text.matchAll(NAME_REFERENCE)].map((m) => m[1] as string));
    for (const name of names) {
      if (known.has(name) || (shell && isShellName(name, shell, known))) continue;
      const other = setter(name, new Set(self === undefined ? [] : [self]));
      warnings.push({
        path: field.path,
        message: message(name, known, other, shell !== undefined),
      });
    }
  };

  // Global values are resolved in every task's context: any name a task could see will do.
  if (!outs.includes("unknown")) {
    const anywhere = new Set([...BUILTIN_PARAM_NAMES, ...global]);
    for (const [k, task] of tasks.entries()) {
      for (const p of Object.keys(task.params)) anywhere.add(p);
      for (const o of outs[k] as ReadonlySet<string>) anywhere.add(o);
    }
    for (const [k, v] of Object.entries(def.params)) {
      check({ path: `params.${k}`, text: v }, anywhere);
    }
  }

  for (const [i, task] of tasks.entries()) {
    const from = inherited[i] as Inherited;
    const fields = substitutedFields(task, i).filter((f) => f.text.includes("${"));
    const cases = task.type === "SWITCH" ? task.cases : [];
    if (from.unknowable || (fields.length === 0 && cases.length === 0)) continue;
    const known = new Set([
      ...BUILTIN_PARAM_NAMES,
      ...global,
      ...Object.keys(task.params),
      ...from.names,
    ]);
    const shell = task.type === "SHELL" ? shellOwnNames(task.command) : undefined;
    for (const field of fields) {
      check(field, known, i, field.path === `tasks[${i}].command` ? shell : undefined);
    }
    for (const [j, c] of cases.entries()) {
      const tested = new Set(conditionTests(c.condition));
      for (const name of conditionReads(c.condition)) {
        if (known.has(name) || tested.has(name)) continue;
        warnings.push({
          path: `tasks[${i}].cases[${j}].condition`,
          message: conditionMessage(name, known, i),
        });
      }
    }
  }
  return warnings;
}

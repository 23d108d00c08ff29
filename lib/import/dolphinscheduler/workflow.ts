/**
 * One DolphinScheduler workflow → one Shoal workflow definition (convert.ts converts the export
 * around it): its tasks by type, their edges, global parameters, workflow settings, timezone and
 * schedule, checked with the API's own validator. Pure.
 */
import { RequestError } from "../../core/errors.js";
import { parseWorkflowDefinition } from "../../core/validate.js";
import { alertChannel, alertGroupOf, timeoutAlertFails } from "./alerts.js";
import { credentialNotes } from "./credentials.js";
import { DsImportError } from "./errors.js";
import type { DsTask, DsWorkflow } from "./export-format.js";
import { conditionsTask, dependentTask, subWorkflowTask, switchTask } from "./logic-tasks.js";
import { displayNameFor } from "./names.js";
import type { NoteBook } from "./notes.js";
import { convertProperties } from "./params.js";
import { convertSchedule } from "./schedule.js";
import type { TaskBody, TaskContext, WorkflowRef } from "./task-common.js";
import { BASH_RUN, httpTask, placeholderTask, pythonTask, shellTask } from "./worker-tasks.js";

/** Options of `convertDolphinScheduler` (convert.ts). */
export interface DsConvertOptions {
  /** Only the workflows of this project (its code, or its name when the export has one). */
  project?: string;
  /** Unsupported task types become failing SHELL tasks instead of stopping the import. */
  placeholder?: boolean;
  /** IANA zone of the DolphinScheduler server (schedule start/end times); default the schedule's zone. */
  serverTimezone?: string;
}

/** One converted workflow. */
export interface ConvertedWorkflow {
  name: string;
  dsName: string;
  dsCode: string;
  projectCode: string;
  /** The WorkflowDefinition body (without `name`), valid by parseWorkflowDefinition. */
  definition: Record<string, unknown>;
  /** `POST /v1/schedules` body, when the workflow had a schedule that converts. */
  schedule?: Record<string, unknown>;
  /** Task types, DolphinScheduler's → how many. */
  taskTypes: Record<string, number>;
  /** The file it came from, when several were imported together. */
  source?: string;
}

type Converter = (t: DsTask, ctx: TaskContext, code: string) => TaskBody;
/** The converter of each supported DolphinScheduler task type (convert.ts SUPPORTED_TYPES). */
export const CONVERTERS: Record<string, Converter> = {
  SHELL: shellTask,
  PYTHON: pythonTask,
  HTTP: httpTask,
  CONDITIONS: conditionsTask,
  SWITCH: switchTask,
  SUB_PROCESS: subWorkflowTask,
  SUB_WORKFLOW: subWorkflowTask,
  DEPENDENT: dependentTask,
};

/**
 * Converts workflow `wf`, named `ref.name`, its notes into `notes`.
 * @param refs the workflows converted with it, by DolphinScheduler code (SUB_PROCESS, DEPENDENT).
 * @param outside what a reference to none of them is, for notes (TaskContext.outside).
 * @throws DsImportError naming the workflow (and task) for what cannot be converted.
 */
export function convertWorkflow(
  wf: DsWorkflow,
  ref: WorkflowRef,
  refs: ReadonlyMap<string, WorkflowRef>,
  notes: NoteBook,
  opts: DsConvertOptions,
  outside: string,
): ConvertedWorkflow {
  const codes = ref.taskCodes;
  const order = wf.tasks.map((t) => codes.get(t.code) as string);
  const upstream = new Map<string, string[]>(order.map((c) => [c, []]));
  for (const e of wf.edges)
    upstream.get(codes.get(e.post) as string)?.push(codes.get(e.pre) as string);
  // Every task's parameters as text, to find the references to a parameter.
  const taskText = JSON.stringify(wf.tasks.map((t) => t.params));
  const ctx: TaskContext = {
    wf,
    workflow: ref.name,
    codes,
    workflows: refs,
    outside,
    notes,
    placeholder: opts.placeholder === true,
    references: (name) => taskText.includes(`\${${name}}`),
    upstreamOf: (code) => [...(upstream.get(code) ?? [])],
    downstream: (code) => order.filter((c) => upstream.get(c)?.includes(code)),
    addEdge: (pre, post) => {
      const ups = upstream.get(post);
      if (ups && !ups.includes(pre)) ups.push(pre);
    },
    dropEdge: (pre, post) => {
      const ups = upstream.get(post);
      if (ups)
        upstream.set(
          post,
          ups.filter((u) => u !== pre),
        );
    },
  };
  const taskTypes: Record<string, number> = {};
  // Logic tasks first: their branches may add edges the other tasks' upstream lists need.
  const bodies = new Map<string, TaskBody>();
  const logicFirst = [...wf.tasks].sort((a, b) => Number(isBranching(b)) - Number(isBranching(a)));
  for (const t of logicFirst) {
    const code = codes.get(t.code) as string;
    taskTypes[t.taskType] = (taskTypes[t.taskType] ?? 0) + 1;
    const convert = CONVERTERS[t.taskType];
    let body: TaskBody;
    if (convert) body = convert(t, ctx, code);
    else {
      body = placeholderTask(t, ctx, code);
      notes.add(
        "unsupported",
        `${t.taskType} task: a SHELL placeholder that fails until its command is replaced`,
        code,
      );
    }
    bodies.set(t.code, body);
  }
  const bash = wf.tasks.filter(
    (t) => t.taskType === "SHELL" && String(bodies.get(t.code)?.command).endsWith(`\n${BASH_RUN}`),
  ).length;
  if (bash > 0) {
    notes.add(
      "approximated",
      `runs with bash: the worker needs bash (${bash === 1 ? "the SHELL task's script is" : `the ${bash} SHELL tasks' scripts are`} written to script.sh and run with \`bash script.sh\`, as DolphinScheduler runs them; Shoal's own SHELL commands run with /bin/sh -c)`,
    );
  }
  const tasks = wf.tasks.map((t) => {
    const code = codes.get(t.code) as string;
    const { type, ...rest } = bodies.get(t.code) as TaskBody;
    const display = displayNameFor(t.name, code);
    const ups = upstream.get(code) ?? [];
    return {
      code,
      ...(display ? { displayName: display } : {}),
      ...(t.description.trim() ? { description: t.description.slice(0, 1024) } : {}),
      type,
      ...(ups.length > 0 ? { upstream: order.filter((c) => ups.includes(c)) } : {}),
      ...rest,
    };
  });
  const definition: Record<string, unknown> = {};
  const display = displayNameFor(wf.name, ref.name);
  if (display) definition.displayName = display;
  if (wf.description.trim()) definition.description = wf.description.slice(0, 1024);
  definition.releaseState = wf.releaseState === "ONLINE" ? "ONLINE" : "OFFLINE";
  if (wf.schedule?.timezoneId && wf.schedule.timezoneId !== "UTC") {
    definition.timezone = wf.schedule.timezoneId;
  }
  const globals = convertProperties(wf.globalParams, notes, "global parameter");
  if (globals.outs.length > 0) {
    notes.add(
      "not-converted",
      `global OUT parameters (${globals.outs.join(", ")}): a Shoal workflow has no OUT parameters`,
    );
  }
  if (Object.keys(globals.params).length > 0) definition.params = globals.params;
  definition.tasks = tasks;
  workflowNotes(wf, notes);
  const schedule = wf.schedule
    ? convertSchedule(wf.schedule, ref.name, wf.executionType, notes, {
        ...(opts.serverTimezone !== undefined ? { serverTimezone: opts.serverTimezone } : {}),
        taskTimeoutAlerts: wf.tasks.some(timeoutAlertFails),
      })
    : undefined;
  if (schedule?.timezone === undefined) delete definition.timezone;
  timezoneNote(wf, definition, schedule !== undefined, notes);
  checkDefinition(wf, definition);
  credentialNotes(definition, notes);
  return {
    name: ref.name,
    dsName: wf.name,
    dsCode: wf.code,
    projectCode: wf.projectCode,
    definition,
    ...(schedule ? { schedule } : {}),
    taskTypes,
  };
}

const isBranching = (t: DsTask) => t.taskType === "CONDITIONS" || t.taskType === "SWITCH";

function workflowNotes(wf: DsWorkflow, notes: NoteBook): void {
  if (wf.timeout > 0) {
    const group = alertGroupOf(wf.schedule);
    const channel = group ? alertChannel(group) : "CHANNEL";
    notes.add(
      "not-converted",
      `workflow timeout ${wf.timeout} min: DolphinScheduler only alerts at it (${group ? `alert group ${group}` : "the run's alert group"}) and lets the run go on; Shoal has no alert-only workflow timeout. A TIMEOUT alert needs the workflow's timeoutSeconds, which also fails the instance at that time (nothing new starts, it ends FAILURE): to have both, add \`timeoutSeconds: ${wf.timeout * 60}\` and \`alerts: [{ on: [TIMEOUT], channels: [${channel}] }]\` to the workflow; leave them out to let runs go on`,
    );
  }
  if (wf.executionType !== "PARALLEL" && wf.executionType !== "") {
    notes.add(
      "approximated",
      wf.schedule
        ? `execution type ${wf.executionType}: the schedule's overlapPolicy (Shoal applies it to the schedule's own runs, not to manual runs)`
        : `execution type ${wf.executionType}: Shoal applies it to a schedule's runs only (overlapPolicy), and this workflow has no schedule`,
    );
  }
  if (wf.tenantCode !== "" && wf.tenantCode !== "default") {
    notes.add("not-converted", `tenant '${wf.tenantCode}': Shoal runs tasks as the worker's user`);
  }
  if (wf.flag === "NO")
    notes.add(
      "not-converted",
      "workflow flag NO (not valid in DolphinScheduler): imported as a normal workflow",
    );
}

/** What the report says about the workflow's `timezone`: what was written, and why. */
function timezoneNote(
  wf: DsWorkflow,
  definition: Record<string, unknown>,
  scheduled: boolean,
  notes: NoteBook,
): void {
  const zone = wf.schedule?.timezoneId;
  if (!zone || zone === "UTC") return;
  if (definition.timezone !== undefined) {
    notes.add(
      "approximated",
      `the workflow's timezone is its schedule's (${zone}), for the time parameters of manual runs too (DolphinScheduler uses the server's zone there)`,
    );
  } else if (!scheduled) {
    // (A converted schedule without a zone: schedule.ts noted the zone Shoal does not accept.)
    notes.add(
      "not-converted",
      `the schedule's zone (${zone}): the schedule is not converted, so the workflow has no timezone and the time parameters of its runs are computed in UTC; add \`timezone: ${zone}\` to the workflow to keep its zone`,
    );
  }
}

/**
 * Checks a converted definition with the API's validator. What fails here is input the
 * converter passes on as it is (an HTTP url that is not a URL, a cycle of relations, a
 * CONDITIONS task without upstream): reported with the DolphinScheduler names of the workflow
 * and task rather than as a stack.
 */
function checkDefinition(wf: DsWorkflow, definition: Record<string, unknown>): void {
  try {
    parseWorkflowDefinition(definition);
  } catch (err) {
    if (!(err instanceof RequestError)) throw err;
    const details = err.details.map((d) => {
      const i = /^tasks\[(\d+)\]\.?(.*)$/.exec(d.path);
      const task = i ? wf.tasks[Number(i[1])] : undefined;
      const where = task ? `task '${task.name}'${i?.[2] ? ` ${i[2]}` : ""}` : d.path;
      return `${where}: ${d.message}`;
    });
    throw new DsImportError(`workflow '${wf.name}': cannot be converted: ${details.join("; ")}`);
  }
}

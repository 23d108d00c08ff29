/**
 * `shoal import dolphinscheduler`'s converter: a DolphinScheduler 3.x export (parsed JSON) →
 * Shoal workflow definitions (the body of `PUT /v1/workflows/{name}`), schedule bodies, and the
 * notes of the report. Every definition is checked with the API's own validator before it is
 * returned. Pure: no file system, no clock (docs/import-dolphinscheduler.md has the mapping).
 */
import { RequestError } from "../../core/errors.js";
import { parseWorkflowDefinition } from "../../core/validate.js";
import { alertChannel, alertGroupOf, timeoutAlertFails } from "./alerts.js";
import { credentialNotes } from "./credentials.js";
import { subWorkflowCycles } from "./cycles.js";
import { DsImportError } from "./errors.js";
import { type DsTask, type DsWorkflow, readExport } from "./export-format.js";
import { conditionsTask, dependentTask, subWorkflowTask, switchTask } from "./logic-tasks.js";
import { displayNameFor, NameScope } from "./names.js";
import { type ImportNote, NoteBook } from "./notes.js";
import { convertProperties } from "./params.js";
import { convertSchedule } from "./schedule.js";
import type { TaskBody, TaskContext, WorkflowRef } from "./task-common.js";
import { BASH_RUN, httpTask, placeholderTask, pythonTask, shellTask } from "./worker-tasks.js";

/** Options of {@link convertDolphinScheduler}. */
export interface DsConvertOptions {
  /** Only the workflows of this project (its code, or its name when the export has one). */
  project?: string;
  /** Unsupported task types become failing SHELL tasks instead of stopping the import. */
  placeholder?: boolean;
  /** IANA zone of the DolphinScheduler server (schedule start/end times); default the schedule's zone. */
  serverTimezone?: string;
}

/** A task whose type Shoal does not have. */
export interface UnsupportedTask {
  workflow: string;
  /** DolphinScheduler's names. */
  dsWorkflow: string;
  task: string;
  type: string;
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
}

/** Everything the import produced. */
export interface DsConversion {
  workflows: ConvertedWorkflow[];
  notes: ImportNote[];
  unsupported: UnsupportedTask[];
  /** Key spellings met in the file. */
  spellings: string[];
  /**
   * DolphinScheduler alert groups the converted schedules' `alerts` name, as the channels
   * (`ds-alert-group-<id>`) the deployment must configure, with the workflows that use them.
   */
  alertGroups: Array<{ id: number; channel: string; workflows: string[] }>;
  /** Sub-workflow cycles among the converted workflows (`[a, b, a]`, Shoal names), each also a note. */
  cycles: string[][];
  /** Projects in the file (code → workflows), and the one kept. */
  projects: Array<{ code: string; name: string; workflows: number }>;
  project?: string;
}

/** Task types converted; the rest are unsupported. */
export const SUPPORTED_TYPES = [
  "SHELL",
  "PYTHON",
  "HTTP",
  "CONDITIONS",
  "SWITCH",
  "SUB_PROCESS",
  "SUB_WORKFLOW",
  "DEPENDENT",
];

type Converter = (t: DsTask, ctx: TaskContext, code: string) => TaskBody;
const CONVERTERS: Record<string, Converter> = {
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
 * Converts an export.
 * @param doc the parsed JSON of the export file.
 * @throws DsImportError for input that cannot be converted (not an export, a workflow without
 *   tasks, an unknown upstream code, no workflow of `project`), naming the workflow and task;
 *   and, when it is not `placeholder`, for unsupported task types (listing each).
 */
export function convertDolphinScheduler(doc: unknown, opts: DsConvertOptions = {}): DsConversion {
  const all = readExport(doc);
  const projects = projectsOf(all);
  const chosen =
    opts.project === undefined
      ? all
      : all.filter(
          (w) =>
            w.projectCode === opts.project ||
            (w.projectName !== "" && w.projectName === opts.project),
        );
  if (chosen.length === 0) {
    const list = projects
      .map(
        (p) =>
          `${p.code}${p.name ? ` (${p.name})` : ""}: ${p.workflows} workflow${p.workflows === 1 ? "" : "s"}`,
      )
      .join("; ");
    throw new DsImportError(
      `no workflow of project '${opts.project}' in the export; its projects: ${list}`,
    );
  }
  const unsupported: UnsupportedTask[] = [];
  const wfScope = new NameScope("wf");
  const refs = new Map<string, WorkflowRef>();
  for (const wf of chosen) {
    const name = wfScope.name(wf.name, wf.code);
    const taskScope = new NameScope("task");
    const taskCodes = new Map(wf.tasks.map((t) => [t.code, taskScope.name(t.name, t.code)]));
    refs.set(wf.code, { name, ds: wf, taskCodes });
    for (const t of wf.tasks) {
      if (!(t.taskType in CONVERTERS))
        unsupported.push({ workflow: name, dsWorkflow: wf.name, task: t.name, type: t.taskType });
    }
  }
  if (unsupported.length > 0 && !opts.placeholder) {
    const lines = unsupported.map((u) => `  ${u.dsWorkflow} / ${u.task}: ${u.type}`);
    throw new DsImportError(
      `${unsupported.length} task${unsupported.length === 1 ? " has a type" : "s have types"} Shoal does not have (workflow / task: type):\n${lines.join("\n")}\nnothing written; with --placeholder each becomes a SHELL task that fails saying what to replace`,
    );
  }
  const notes: ImportNote[] = [];
  const groups = new Map<number, string[]>();
  const workflows = chosen.map((wf) => {
    const ref = refs.get(wf.code) as WorkflowRef;
    const book = new NoteBook(ref.name);
    const out = convertWorkflow(wf, ref, refs, book, opts);
    notes.push(...book.notes);
    const group = alertGroupOf(wf.schedule);
    if (group && out.schedule?.alerts) groups.set(group, [...(groups.get(group) ?? []), out.name]);
    return out;
  });
  const cycles = subWorkflowCycles(
    workflows.map((w) => ({
      name: w.name,
      children: (w.definition.tasks as Array<{ type: string; workflow?: string }>)
        .filter((t) => t.type === "SUB_WORKFLOW" && t.workflow !== undefined)
        .map((t) => t.workflow as string),
    })),
  );
  for (const cycle of cycles) {
    notes.push({
      kind: "not-converted",
      workflow: cycle[0] as string,
      message: `sub-workflow cycle ${cycle.map((n) => `\`${n}\``).join(" → ")}: DolphinScheduler saves it and a run nests until it fails; Shoal refuses it (the API refuses a SUB_WORKFLOW task whose workflow does not exist yet, and a definition that closes a cycle), so these workflows cannot be applied as written. Remove or retarget one SUB_WORKFLOW task of the cycle first`,
    });
  }
  return {
    workflows,
    notes,
    cycles,
    unsupported,
    alertGroups: [...groups]
      .sort(([a], [b]) => a - b)
      .map(([id, names]) => ({ id, channel: alertChannel(id), workflows: names })),
    spellings: [...new Set(chosen.map((w) => w.spelling))],
    projects,
    ...(opts.project !== undefined ? { project: opts.project } : {}),
  };
}

function projectsOf(all: readonly DsWorkflow[]): DsConversion["projects"] {
  const by = new Map<string, { code: string; name: string; workflows: number }>();
  for (const w of all) {
    const p = by.get(w.projectCode) ?? { code: w.projectCode, name: w.projectName, workflows: 0 };
    p.workflows++;
    if (!p.name && w.projectName) p.name = w.projectName;
    by.set(w.projectCode, p);
  }
  return [...by.values()];
}

function convertWorkflow(
  wf: DsWorkflow,
  ref: WorkflowRef,
  refs: ReadonlyMap<string, WorkflowRef>,
  notes: NoteBook,
  opts: DsConvertOptions,
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

/**
 * `shoal import dolphinscheduler`'s converter: a DolphinScheduler 3.x export (parsed JSON) →
 * Shoal workflow definitions (the body of `PUT /v1/workflows/{name}`), schedule bodies, and the
 * notes of the report. Every definition is checked with the API's own validator before it is
 * returned. Pure: no file system, no clock (docs/import-dolphinscheduler.md has the mapping).
 */
import { alertChannel, alertGroupOf } from "./alerts.js";
import { subWorkflowCycles } from "./cycles.js";
import { DsImportError } from "./errors.js";
import { type DsWorkflow, readExport } from "./export-format.js";
import { NameScope } from "./names.js";
import { type ImportNote, NoteBook } from "./notes.js";
import type { WorkflowRef } from "./task-common.js";
import {
  CONVERTERS,
  type ConvertedWorkflow,
  convertWorkflow,
  type DsConvertOptions,
} from "./workflow.js";

export type { ConvertedWorkflow, DsConvertOptions } from "./workflow.js";

/** A task whose type Shoal does not have. */
export interface UnsupportedTask {
  workflow: string;
  /** DolphinScheduler's names. */
  dsWorkflow: string;
  task: string;
  type: string;
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
  /** The files imported together, when there were several (convertDolphinSchedulerFiles). */
  sources?: string[];
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

/**
 * Converts an export.
 * @param doc the parsed JSON of the export file.
 * @throws DsImportError for input that cannot be converted (not an export, a workflow without
 *   tasks, an unknown upstream code, no workflow of `project`), naming the workflow and task;
 *   and, when it is not `placeholder`, for unsupported task types (listing each).
 */
export function convertDolphinScheduler(doc: unknown, opts: DsConvertOptions = {}): DsConversion {
  return convertExports([readExport(doc)], opts);
}

/**
 * Converts the workflows of one or more exports together (`groups`: each file's workflows, in
 * file order, each with its `source` when there are several files): a SUB_PROCESS or DEPENDENT
 * task finds its workflow in any of them. Names are given per file as for one file.
 * @throws DsImportError as {@link convertDolphinScheduler}; with several files each message
 *   names the file, and two files' workflows with one Shoal name or one code are an error
 *   naming both.
 */
function convertExports(
  groups: readonly (readonly DsWorkflow[])[],
  opts: DsConvertOptions = {},
): DsConversion {
  const all = groups.flat();
  const sources = groups.length > 1 ? groups.map((g) => g[0]?.source ?? "") : undefined;
  const projects = projectsOf(all);
  const inProject = (w: DsWorkflow) =>
    opts.project === undefined ||
    w.projectCode === opts.project ||
    (w.projectName !== "" && w.projectName === opts.project);
  const chosen = all.filter(inProject);
  if (chosen.length === 0) {
    const list = projects
      .map(
        (p) =>
          `${p.code}${p.name ? ` (${p.name})` : ""}: ${p.workflows} workflow${p.workflows === 1 ? "" : "s"}`,
      )
      .join("; ");
    throw new DsImportError(
      `no workflow of project '${opts.project}' in the export${sources ? "s" : ""}; its projects: ${list}`,
    );
  }
  const unsupported: UnsupportedTask[] = [];
  const refs = new Map<string, WorkflowRef>();
  const named = new Map<string, DsWorkflow>();
  for (const group of groups) {
    // One scope per file: a file alone gets the names it gets when imported alone.
    const wfScope = new NameScope("wf");
    for (const wf of group.filter(inProject)) {
      const name = wfScope.name(wf.name, wf.code);
      const sameCode = refs.get(wf.code)?.ds;
      const other = named.get(name) ?? (sameCode?.source !== wf.source ? sameCode : undefined);
      if (other) throw collision(name, other, wf);
      named.set(name, wf);
      const taskScope = new NameScope("task");
      const taskCodes = new Map(wf.tasks.map((t) => [t.code, taskScope.name(t.name, t.code)]));
      refs.set(wf.code, { name, ds: wf, taskCodes });
      for (const t of wf.tasks) {
        if (!(t.taskType in CONVERTERS))
          unsupported.push({ workflow: name, dsWorkflow: wf.name, task: t.name, type: t.taskType });
      }
    }
  }
  if (unsupported.length > 0 && !opts.placeholder) {
    const lines = unsupported.map((u) => {
      const source = sources ? `${named.get(u.workflow)?.source}: ` : "";
      return `  ${source}${u.dsWorkflow} / ${u.task}: ${u.type}`;
    });
    throw new DsImportError(
      `${unsupported.length} task${unsupported.length === 1 ? " has a type" : "s have types"} Shoal does not have (${sources ? "file: " : ""}workflow / task: type):\n${lines.join("\n")}\nnothing written; with --placeholder each becomes a SHELL task that fails saying what to replace`,
    );
  }
  const notes: ImportNote[] = [];
  const groupsByAlert = new Map<number, string[]>();
  const outside = sources ? "in none of the imported files" : "not in this file";
  const workflows = chosen.map((wf) => {
    const ref = refs.get(wf.code) as WorkflowRef;
    const book = new NoteBook(ref.name);
    let out: ConvertedWorkflow;
    try {
      out = convertWorkflow(wf, ref, refs, book, opts, outside);
    } catch (err) {
      if (sources && err instanceof DsImportError)
        throw new DsImportError(`${wf.source}: ${err.message}`, { cause: err });
      throw err;
    }
    notes.push(...book.notes);
    const group = alertGroupOf(wf.schedule);
    if (group && out.schedule?.alerts)
      groupsByAlert.set(group, [...(groupsByAlert.get(group) ?? []), out.name]);
    return sources ? { ...out, source: wf.source as string } : out;
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
    alertGroups: [...groupsByAlert]
      .sort(([a], [b]) => a - b)
      .map(([id, names]) => ({ id, channel: alertChannel(id), workflows: names })),
    spellings: [...new Set(chosen.map((w) => w.spelling))],
    projects,
    ...(opts.project !== undefined ? { project: opts.project } : {}),
    ...(sources ? { sources } : {}),
  };
}

/**
 * Two workflows of different files that get one Shoal name, or have one code (one workflow in
 * two exports: references to it would be ambiguous): which, and what to do.
 */
function collision(name: string, a: DsWorkflow, b: DsWorkflow): DsImportError {
  const which = (w: DsWorkflow) => `'${w.name}' (code ${w.code}) in ${w.source}`;
  const what =
    a.code === b.code
      ? `workflow code ${a.code} is in two files: ${which(a)} and ${which(b)}; import only one of them`
      : `two workflows would both be named '${name}': ${which(a)} and ${which(b)}; rename one of them in DolphinScheduler and export it again, or import the files separately`;
  return new DsImportError(what);
}

/** One parsed export file and the name it is reported under. */
export interface DsExportFile {
  /** The file as the user named it (`exports/orders.json`). */
  source: string;
  /** Its parsed JSON. */
  doc: unknown;
}

/**
 * Converts several export files together (`shoal import dolphinscheduler DIR|FILE…`): a
 * DEPENDENT or SUB_PROCESS task on a workflow of any of them gets that workflow's Shoal name;
 * only references to none of them are reported as external. One file converts exactly as
 * {@link convertDolphinScheduler} does.
 * @throws DsImportError as {@link convertDolphinScheduler}, each message naming the file; and
 *   for two files' workflows with one Shoal name or one code, naming both files.
 */
export function convertDolphinSchedulerFiles(
  files: readonly DsExportFile[],
  opts: DsConvertOptions = {},
): DsConversion {
  if (files.length === 1) return convertDolphinScheduler(files[0]?.doc, opts);
  const groups = files.map(({ source, doc }) => {
    try {
      return readExport(doc).map((w) => ({ ...w, source }));
    } catch (err) {
      if (err instanceof DsImportError)
        throw new DsImportError(`${source}: ${err.message}`, { cause: err });
      throw err;
    }
  });
  return convertExports(groups, opts);
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

/**
 * Reading a DolphinScheduler 3.x "export workflow" file into one normalised shape, whichever
 * key spelling it uses: 3.0–3.2 (`processDefinition`, `processTaskRelationList`,
 * `SUB_PROCESS`/`processDefinitionCode`, `processInstancePriority`) or 3.3+
 * (`workflowDefinition`, `workflowTaskRelationList`, `SUB_WORKFLOW`/`workflowDefinitionCode`,
 * `workflowInstancePriority`). Sources: DolphinScheduler's `DagDataSchedule`/`DagData`,
 * `ProcessDefinition`/`WorkflowDefinition`, `TaskDefinition`, `Schedule` entities and
 * `JSONUtils` (codes are Java longs, enums by name, `globalParams` and `locations` are JSON
 * strings, `taskParams` embedded JSON or a string). Pure: the caller parses the file.
 */
import { DsImportError } from "./errors.js";

/** Which key spelling an element of the file used. */
export type DsSpelling = "3.0-3.2" | "3.3";

/** DolphinScheduler's `Property`: a parameter with its direction. */
export interface DsProperty {
  prop: string;
  direct: "IN" | "OUT";
  type: string;
  value: string;
}

/** One task definition (`TaskDefinition`), the fields the importer reads. */
export interface DsTask {
  /** Task code as a decimal string (a Java long). */
  code: string;
  name: string;
  description: string;
  taskType: string;
  /** Type-specific parameters, parsed. */
  params: Record<string, unknown>;
  /** Run flag: `NO` = "prohibit execution" (the task is skipped). */
  flag: string;
  priority: unknown;
  workerGroup: string;
  environmentCode: string;
  failRetryTimes: number;
  /** Minutes. */
  failRetryInterval: number;
  timeoutFlag: string;
  timeoutNotifyStrategy: string | null;
  /** Minutes. */
  timeout: number;
  /** Minutes. */
  delayTime: number;
  taskGroupId: number;
  /** Only some exports (or hand-edited files) carry it; DolphinScheduler's own has the id only. */
  taskGroupName?: string;
  taskGroupPriority: number;
  isCache: string;
  cpuQuota: number;
  memoryMax: number;
  taskExecuteType: string;
}

/** A workflow's schedule (`Schedule`), the fields the importer reads. */
export interface DsSchedule {
  crontab: string;
  timezoneId: string;
  /** `yyyy-MM-dd HH:mm:ss` in the DolphinScheduler server's zone (no zone in the text). */
  startTime: string;
  endTime: string;
  failureStrategy: string;
  warningType: string;
  warningGroupId: number;
  releaseState: string;
  priority: unknown;
  workerGroup: string;
  tenantCode: string;
  environmentCode: string;
}

/** One element of the export: a workflow with its tasks, edges and schedule. */
export interface DsWorkflow {
  spelling: DsSpelling;
  /** Position in the file, from 0. */
  index: number;
  /** The file it was read from, when several are imported together (export-files.ts). */
  source?: string;
  code: string;
  name: string;
  description: string;
  projectCode: string;
  projectName: string;
  releaseState: string;
  flag: string;
  globalParams: DsProperty[];
  /** Minutes; 0 = none. */
  timeout: number;
  executionType: string;
  /** 3.0/3.1 only. */
  tenantCode: string;
  tasks: DsTask[];
  /** Edges `pre → post` (relation rows with preTaskCode ≠ 0), codes as strings. */
  edges: Array<{ pre: string; post: string }>;
  schedule?: DsSchedule;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A Java long as a decimal string ("" for null/absent). */
export function codeOf(v: unknown): string {
  if (typeof v === "number" && Number.isFinite(v)) return String(Math.trunc(v));
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "string") return v.trim();
  return "";
}

const str = (v: unknown): string => (typeof v === "string" ? v : v == null ? "" : String(v));
const num = (v: unknown, dflt = 0): number => {
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? n : dflt;
};

/**
 * A field that holds JSON either embedded or as a string (DolphinScheduler's
 * `JsonDataDeserializer` accepts both): the parsed value, `fallback` when null or "".
 * @throws DsImportError naming `where` when the string is not JSON.
 */
function jsonField(v: unknown, fallback: unknown, where: string): unknown {
  if (v === null || v === undefined) return fallback;
  if (typeof v !== "string") return v;
  if (v.trim() === "") return fallback;
  try {
    return JSON.parse(v);
  } catch (e) {
    throw new DsImportError(`${where}: not JSON (${(e as Error).message})`);
  }
}

function properties(v: unknown, where: string): DsProperty[] {
  const list = jsonField(v, [], where);
  if (!Array.isArray(list)) throw new DsImportError(`${where}: must be a list of parameters`);
  return list.filter(isObj).map((p) => ({
    prop: str(p.prop),
    direct: str(p.direct).toUpperCase() === "OUT" ? "OUT" : "IN",
    type: str(p.type) || "VARCHAR",
    value: str(p.value),
  }));
}

function readTask(t: unknown, wf: string, i: number): DsTask {
  if (!isObj(t))
    throw new DsImportError(`workflow '${wf}': taskDefinitionList[${i}] is not an object`);
  const name = str(t.name);
  const code = codeOf(t.code);
  const label = `workflow '${wf}', task '${name || `#${i}`}'`;
  if (code === "") throw new DsImportError(`${label}: has no code`);
  if (name === "") throw new DsImportError(`workflow '${wf}': task ${code} has no name`);
  const taskType = str(t.taskType).toUpperCase();
  if (taskType === "") throw new DsImportError(`${label}: has no taskType`);
  const params = jsonField(t.taskParams, {}, `${label}: taskParams`);
  if (!isObj(params)) throw new DsImportError(`${label}: taskParams must be an object`);
  const localParams = Array.isArray(params.localParams)
    ? params.localParams
    : Array.isArray(t.taskParamList)
      ? t.taskParamList
      : [];
  return {
    code,
    name,
    description: str(t.description),
    taskType,
    params: { ...params, localParams: properties(localParams, `${label}: localParams`) },
    flag: str(t.flag) || "YES",
    priority: t.taskPriority,
    workerGroup: str(t.workerGroup) || "default",
    environmentCode: codeOf(t.environmentCode) || "-1",
    failRetryTimes: num(t.failRetryTimes),
    failRetryInterval: num(t.failRetryInterval),
    timeoutFlag: str(t.timeoutFlag) || "CLOSE",
    timeoutNotifyStrategy: t.timeoutNotifyStrategy == null ? null : str(t.timeoutNotifyStrategy),
    timeout: num(t.timeout),
    delayTime: num(t.delayTime),
    taskGroupId: num(t.taskGroupId),
    ...(typeof t.taskGroupName === "string" && t.taskGroupName !== ""
      ? { taskGroupName: t.taskGroupName }
      : {}),
    taskGroupPriority: num(t.taskGroupPriority),
    isCache: str(t.isCache) || "NO",
    cpuQuota: num(t.cpuQuota, -1),
    memoryMax: num(t.memoryMax, -1),
    taskExecuteType: str(t.taskExecuteType) || "BATCH",
  };
}

function readSchedule(s: unknown): DsSchedule | undefined {
  if (!isObj(s)) return undefined;
  return {
    crontab: str(s.crontab),
    timezoneId: str(s.timezoneId),
    startTime: str(s.startTime),
    endTime: str(s.endTime),
    failureStrategy: str(s.failureStrategy),
    warningType: str(s.warningType) || "NONE",
    warningGroupId: num(s.warningGroupId),
    releaseState: str(s.releaseState) || "OFFLINE",
    priority: s.processInstancePriority ?? s.workflowInstancePriority,
    workerGroup: str(s.workerGroup) || "default",
    tenantCode: str(s.tenantCode),
    environmentCode: codeOf(s.environmentCode) || "-1",
  };
}

/**
 * The workflows of an export file, in file order.
 * @param doc the parsed JSON: an array of elements (a single element object is accepted too).
 * @throws DsImportError naming the element, workflow or task: not an array, an element without
 *   a workflow definition, a workflow without tasks, a relation naming an unknown task code.
 */
export function readExport(doc: unknown): DsWorkflow[] {
  const list = Array.isArray(doc) ? doc : isObj(doc) ? [doc] : undefined;
  if (!list) {
    throw new DsImportError(
      "not a DolphinScheduler export: expected a JSON array of workflows (each with processDefinition or workflowDefinition)",
    );
  }
  if (list.length === 0) throw new DsImportError("the export holds no workflow (an empty array)");
  return list.map((el, index) => readElement(el, index));
}

function readElement(el: unknown, index: number): DsWorkflow {
  const where = `element ${index + 1}`;
  if (!isObj(el)) throw new DsImportError(`${where}: not an object`);
  const spelling: DsSpelling | undefined = isObj(el.workflowDefinition)
    ? "3.3"
    : isObj(el.processDefinition)
      ? "3.0-3.2"
      : undefined;
  if (!spelling) {
    throw new DsImportError(
      `${where}: has neither processDefinition (DolphinScheduler 3.0–3.2) nor workflowDefinition (3.3+)`,
    );
  }
  const def = (spelling === "3.3" ? el.workflowDefinition : el.processDefinition) as Obj;
  const name = str(def.name);
  const code = codeOf(def.code);
  if (name === "") throw new DsImportError(`${where}: the workflow has no name`);
  const wf = name;
  const rawTasks = el.taskDefinitionList;
  if (!Array.isArray(rawTasks) || rawTasks.length === 0) {
    throw new DsImportError(
      `workflow '${wf}': has no tasks (taskDefinitionList is empty or missing)`,
    );
  }
  const tasks = rawTasks.map((t, i) => readTask(t, wf, i));
  const byCode = new Map<string, DsTask>();
  for (const t of tasks) {
    const other = byCode.get(t.code);
    if (other) {
      throw new DsImportError(
        `workflow '${wf}': tasks '${other.name}' and '${t.name}' share the code ${t.code}`,
      );
    }
    byCode.set(t.code, t);
  }
  const relKey = spelling === "3.3" ? "workflowTaskRelationList" : "processTaskRelationList";
  const rawRel = el[relKey] ?? el.processTaskRelationList ?? el.workflowTaskRelationList;
  if (rawRel !== undefined && rawRel !== null && !Array.isArray(rawRel)) {
    throw new DsImportError(`workflow '${wf}': ${relKey} must be a list`);
  }
  const edges: Array<{ pre: string; post: string }> = [];
  const seen = new Set<string>();
  for (const [i, r] of ((rawRel as unknown[] | undefined) ?? []).entries()) {
    if (!isObj(r)) throw new DsImportError(`workflow '${wf}': ${relKey}[${i}] is not an object`);
    const pre = codeOf(r.preTaskCode);
    const post = codeOf(r.postTaskCode);
    if (!byCode.has(post)) {
      throw new DsImportError(
        `workflow '${wf}': ${relKey}[${i}] names postTaskCode ${post || "(none)"}, which is not a task of this workflow`,
      );
    }
    if (pre === "" || pre === "0") continue;
    if (!byCode.has(pre)) {
      throw new DsImportError(
        `workflow '${wf}': task '${byCode.get(post)?.name}' has an unknown upstream task code ${pre}`,
      );
    }
    const key = `${pre}>${post}`;
    if (!seen.has(key)) edges.push({ pre, post });
    seen.add(key);
  }
  const schedule = readSchedule(el.schedule);
  return {
    spelling,
    index,
    code,
    name,
    description: str(def.description),
    projectCode: codeOf(def.projectCode),
    projectName: str(def.projectName),
    releaseState: str(def.releaseState) || "OFFLINE",
    flag: str(def.flag) || "YES",
    globalParams: properties(
      def.globalParams ?? def.globalParamList,
      `workflow '${wf}': globalParams`,
    ),
    timeout: num(def.timeout),
    executionType: str(def.executionType) || "PARALLEL",
    tenantCode: str(def.tenantCode),
    tasks,
    edges,
    ...(schedule ? { schedule } : {}),
  };
}

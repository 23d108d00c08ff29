/**
 * Converts a WfCommons execution trace (WfFormat 1.5 JSON) into a Shoal workflow definition
 * of SHELL tasks that `sleep` for each task's recorded runtime, so real scientific DAG shapes
 * can be replayed against the scheduler. Pure: the caller reads the file.
 */
import { z } from "zod";

/** `PUT /v1/workflows/{name}` body (docs/api.md "WorkflowDefinition"), reduced to the fields the converter sets. */
export interface WorkflowDefinitionBody {
  description?: string;
  tasks: Array<{ code: string; type: "SHELL"; upstream: string[]; command: string }>;
}

/** Result of {@link convertWfcommons}. Durations are seconds, time scale already applied. */
export interface WfcommonsConversion {
  definition: WorkflowDefinitionBody;
  /** Longest parent→child chain of scaled runtimes: no scheduler can finish faster. */
  criticalPathSeconds: number;
  /** Sum of all scaled runtimes. */
  totalWorkSeconds: number;
  taskCount: number;
  /** Distinct parent→child dependencies. */
  edgeCount: number;
}

/** Same pattern as workflow names and task codes in docs/api.md "Conventions". */
const CODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const CODE_MAX_LENGTH = 128;

/** Zod error option: "is missing" when absent, "must be <what>" when of the wrong type. */
function expected(what: string) {
  return {
    error: (issue: { input?: unknown }) =>
      issue.input === undefined ? "is missing" : `must be ${what}`,
  };
}

// Only the fields the converter reads; everything else in a trace (files, machines...) is ignored.
const traceSchema = z.object({
  name: z.string().optional(),
  schemaVersion: z.string().optional(),
  workflow: z.object(
    {
      specification: z.object(
        {
          tasks: z
            .array(
              z.object(
                {
                  id: z.string(expected("a string")).min(1, "must not be empty"),
                  parents: z.array(z.string(expected("a string")), expected("an array")),
                },
                expected("an object"),
              ),
              expected("an array"),
            )
            .min(1, "must contain at least one task"),
        },
        expected("an object"),
      ),
      execution: z
        .object(
          {
            tasks: z.array(
              z.object(
                {
                  id: z.string(expected("a string")),
                  runtimeInSeconds: z.number(expected("a number")).min(0, "must not be negative"),
                },
                expected("an object"),
              ),
              expected("an array"),
            ),
          },
          expected("an object"),
        )
        .optional(),
    },
    expected("an object"),
  ),
});

/**
 * Converts a parsed WfFormat document into a workflow definition body.
 *
 * One SHELL task per `workflow.specification.tasks[]` entry, in that order; `upstream` comes
 * from the task's `parents`; the command is `sleep <runtimeInSeconds × timeScale>` with the
 * seconds rounded to milliseconds (a task without an execution entry sleeps 0). Task ids that
 * are not valid codes are rewritten (invalid characters → `_`, a leading `t` if needed,
 * truncated to 128 characters, `_2`, `_3`... on collision); valid ids are kept unchanged.
 * `criticalPathSeconds` and `totalWorkSeconds` use the rounded sleep durations, i.e. exactly
 * what the generated tasks will do.
 *
 * @param doc the trace file as parsed by `JSON.parse`.
 * @param opts.timeScale factor applied to every runtime (0.1 = ten times faster); finite, ≥ 0.
 * @param opts.source name of the file the trace came from, quoted in the description.
 * @throws Error with a one-sentence message naming the offending path when the document is not
 *   a WfFormat trace, a parent or execution id is unknown, an id is duplicated, a runtime is
 *   not a non-negative number, the dependencies form a cycle, or the time scale is invalid.
 */
export function convertWfcommons(
  doc: unknown,
  opts: { timeScale: number; source?: string },
): WfcommonsConversion {
  const { timeScale } = opts;
  if (!Number.isFinite(timeScale) || timeScale < 0) {
    throw new Error(`timeScale must be a finite number >= 0, got ${timeScale}.`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new Error("WfCommons trace: expected a JSON object at the top level.");
  }
  const parsed = traceSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${formatPath(issue?.path ?? [])}: ${issue?.message ?? "invalid document"}.`);
  }
  const trace = parsed.data;
  const specTasks = trace.workflow.specification.tasks;

  const indexById = new Map<string, number>();
  specTasks.forEach((task, i) => {
    if (indexById.has(task.id)) {
      throw new Error(`workflow.specification.tasks[${i}].id: duplicate task id '${task.id}'.`);
    }
    indexById.set(task.id, i);
  });

  // Parents as indices, deduplicated, so the graph work below never touches raw ids again.
  const parentsOf: number[][] = specTasks.map((task, i) => {
    const seen = new Set<number>();
    task.parents.forEach((parentId, j) => {
      const p = indexById.get(parentId);
      if (p === undefined) {
        throw new Error(
          `workflow.specification.tasks[${i}].parents[${j}]: unknown task id '${parentId}'.`,
        );
      }
      seen.add(p);
    });
    return [...seen];
  });

  const millis = scaledMillis(trace.workflow.execution?.tasks ?? [], indexById, timeScale);
  const ids = specTasks.map((t) => t.id);
  const order = topologicalOrder(parentsOf, ids);
  const codes = assignCodes(ids);

  // Longest path in integer milliseconds: exact, no floating-point drift over thousands of tasks.
  const finish = new Array<number>(specTasks.length).fill(0);
  let criticalMs = 0;
  for (const i of order) {
    let start = 0;
    for (const p of parentsOf[i] ?? []) start = Math.max(start, finish[p] ?? 0);
    const end = start + (millis[i] ?? 0);
    finish[i] = end;
    criticalMs = Math.max(criticalMs, end);
  }
  const totalMs = millis.reduce((a, b) => a + b, 0);

  const tasks = specTasks.map((_, i) => ({
    code: codes[i] ?? "",
    type: "SHELL" as const,
    upstream: (parentsOf[i] ?? []).map((p) => codes[p] ?? ""),
    command: `sleep ${formatSeconds(millis[i] ?? 0)}`,
  }));
  const from = opts.source ? `'${opts.source}'` : "a WfCommons trace";
  const workflowName = trace.name ? ` (workflow '${trace.name}')` : "";
  const description =
    `Replay of ${from}${workflowName}, WfFormat ${trace.schemaVersion ?? "?"}: ` +
    `${tasks.length} sleep tasks, recorded runtimes × ${timeScale}, ` +
    `critical path ${formatSeconds(criticalMs)} s.`;

  return {
    definition: { description, tasks },
    criticalPathSeconds: criticalMs / 1000,
    totalWorkSeconds: totalMs / 1000,
    taskCount: tasks.length,
    edgeCount: parentsOf.reduce((a, ps) => a + ps.length, 0),
  };
}

/** Scaled runtime of every specification task in whole milliseconds (0 without an entry). */
function scaledMillis(
  execTasks: ReadonlyArray<{ id: string; runtimeInSeconds: number }>,
  indexById: ReadonlyMap<string, number>,
  timeScale: number,
): number[] {
  const millis = new Array<number>(indexById.size).fill(0);
  const seen = new Set<number>();
  execTasks.forEach((task, k) => {
    const where = `workflow.execution.tasks[${k}]`;
    const i = indexById.get(task.id);
    if (i === undefined) throw new Error(`${where}.id: unknown task id '${task.id}'.`);
    if (seen.has(i)) throw new Error(`${where}.id: duplicate execution entry for '${task.id}'.`);
    seen.add(i);
    const ms = Math.round(task.runtimeInSeconds * timeScale * 1000);
    if (!Number.isSafeInteger(ms)) {
      throw new Error(`${where}.runtimeInSeconds: scaled runtime is too large to sleep.`);
    }
    millis[i] = ms;
  });
  return millis;
}

/** Kahn's algorithm over parent lists; throws naming one concrete cycle if there is one. */
function topologicalOrder(parentsOf: number[][], ids: readonly string[]): number[] {
  const n = parentsOf.length;
  const childrenOf: number[][] = Array.from({ length: n }, () => []);
  const pending = new Array<number>(n).fill(0);
  parentsOf.forEach((ps, i) => {
    pending[i] = ps.length;
    for (const p of ps) childrenOf[p]?.push(i);
  });
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (pending[i] === 0) order.push(i);
  for (let k = 0; k < order.length; k++) {
    for (const c of childrenOf[order[k] ?? 0] ?? []) {
      pending[c] = (pending[c] ?? 0) - 1;
      if (pending[c] === 0) order.push(c);
    }
  }
  if (order.length === n) return order;

  // Every task left over still waits on a left-over parent, so walking parents must loop.
  const walk: number[] = [];
  const position = new Map<number, number>();
  let cur = pending.findIndex((count) => count > 0);
  while (!position.has(cur)) {
    position.set(cur, walk.length);
    walk.push(cur);
    cur = (parentsOf[cur] ?? []).find((p) => (pending[p] ?? 0) > 0) ?? cur;
  }
  const cycle = walk.slice(position.get(cur)).reverse();
  const names = [...cycle, cycle[0] ?? cur].map((i) => `'${ids[i]}'`).join(" -> ");
  throw new Error(`workflow.specification.tasks: dependency cycle ${names}.`);
}

/**
 * Maps trace ids to unique task codes. Ids that already are valid codes keep their name
 * (they are unique, duplicates were rejected), so only rewritten ids can get a suffix.
 */
function assignCodes(ids: readonly string[]): string[] {
  const used = new Set(ids.filter((id) => CODE_PATTERN.test(id)));
  return ids.map((id) => {
    if (CODE_PATTERN.test(id)) return id;
    let base = id.replace(/[^A-Za-z0-9_.-]/g, "_");
    if (!/^[A-Za-z0-9]/.test(base)) base = `t${base}`;
    let code = base.slice(0, CODE_MAX_LENGTH);
    for (let n = 2; used.has(code); n++) {
      const suffix = `_${n}`;
      code = base.slice(0, CODE_MAX_LENGTH - suffix.length) + suffix;
    }
    used.add(code);
    return code;
  });
}

/** Milliseconds as seconds with at most 3 decimals and no trailing zeros: 214 → "0.214". */
function formatSeconds(ms: number): string {
  const whole = Math.floor(ms / 1000);
  const frac = String(ms % 1000)
    .padStart(3, "0")
    .replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : String(whole);
}

/** Zod issue path → `workflow.specification.tasks[3].parents[0]`. */
function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path) {
    out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  }
  return out || "WfCommons trace";
}

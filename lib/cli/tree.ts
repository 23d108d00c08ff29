/**
 * The task tree of `shoal get instance`: the workflow's DAG drawn as an indented tree in
 * topological order, each task with its latest attempt. Every step is linear in tasks plus
 * edges, so a DAG of thousands of tasks draws as fast as it prints.
 */
import { ACTIVE_TASK_STATES } from "./api-states.js";
import type { Instance, TaskInstance, WorkflowTaskRef } from "./api-types.js";
import { durationBetween, formatDuration, oneLine } from "./format.js";
import { progressText } from "./progress.js";

/** How many codes `(also after: …)` and `→ …` name before they only count the rest. */
const ALSO_AFTER_NAMES = 3;
/** Labels (tree prefix + code) are padded to at most this width, so one deep branch cannot widen every line. */
const MAX_LABEL_WIDTH = 48;
/**
 * Indentation stops growing below this many levels (then a line says its level instead), so a
 * long chain costs lines, not a square of them in spaces.
 */
const MAX_INDENT_LEVELS = 30;
/** Longest task error shown on a tree line. */
const MAX_ERROR_CHARS = 80;

/**
 * Orders tasks so every task comes after all of its upstreams (Kahn's algorithm, ties in
 * definition order). Unknown upstream codes are ignored; tasks caught in a cycle, which a valid
 * definition cannot have, follow in definition order.
 */
export function topologicalOrder(tasks: readonly WorkflowTaskRef[]): WorkflowTaskRef[] {
  const unique = uniqueByCode(tasks);
  const index = new Map(unique.map((t, i) => [t.code, i]));
  const indegree = new Array<number>(unique.length).fill(0);
  const downstream: number[][] = unique.map(() => []);
  unique.forEach((t, i) => {
    for (const up of new Set(t.upstream ?? [])) {
      const u = index.get(up);
      if (u === undefined || u === i) continue;
      indegree[i] = (indegree[i] ?? 0) + 1;
      downstream[u]?.push(i);
    }
  });
  const queue: number[] = [];
  indegree.forEach((d, i) => {
    if (d === 0) queue.push(i);
  });
  // A moving head instead of shift(): shift() on a long array is O(n) per call.
  for (let head = 0; head < queue.length; head++) {
    for (const next of downstream[queue[head] ?? -1] ?? []) {
      indegree[next] = (indegree[next] ?? 0) - 1;
      if (indegree[next] === 0) queue.push(next);
    }
  }
  const placed = new Set(queue);
  const order = queue.map((i) => unique[i] as WorkflowTaskRef);
  unique.forEach((t, i) => {
    if (!placed.has(i)) order.push(t);
  });
  return order;
}

/**
 * Draws `inst` as a header line (id, workflow:version, state, the API's progress, duration)
 * followed by one line
 * per task of the DAG `definition`: `code  STATE  attempt N  12.3s`, children indented under
 * their first upstream, a task with several upstreams marked `(also after: b, c)`, a task
 * without an attempt yet as `-`; notes follow (error, warning, awaited task group, branch
 * taken, sub-instance: see `noteCell`). Without a definition (e.g. a deleted workflow) the
 * instance's tasks are listed flat. `now` is the clock for running durations (epoch ms).
 */
export function renderInstanceTree(
  inst: Instance,
  definition: readonly WorkflowTaskRef[] | undefined,
  now: number = Date.now(),
): string[] {
  // The API's progress (as `run --wait` and `instances --watch` show it), when it has one.
  const progress = progressText(inst.progress);
  const header = [
    inst.instanceId,
    `${inst.workflow}:${inst.version}`,
    inst.state,
    ...(progress === undefined ? [] : [progress]),
    durationBetween(inst.startedAt, inst.endedAt, now),
  ].join("  ");

  const latest = latestAttempts(inst.tasks ?? []);
  const known = new Set((definition ?? []).map((t) => t.code));
  // Tasks the definition does not name (only without one, in practice) are drawn as roots.
  const extra = [...latest.keys()].filter((code) => !known.has(code)).map((code) => ({ code }));
  const order = topologicalOrder([...(definition ?? []), ...extra]);

  const rows = treeRows(order).map(({ label, task, alsoAfter, level }) => {
    const attempt = latest.get(task.code);
    return [label, ...attemptCells(attempt, now), noteCell(attempt, alsoAfter, level)];
  });
  return [header, ...alignRows(rows)];
}

const MIDDLE = "├─ ";
const LAST = "└─ ";

/** A task waiting to be drawn: its index, the indentation above it and its connector. */
interface Frame {
  i: number;
  prefix: string;
  connector: string;
  /** Code of the task it is drawn under (none for a root). */
  parent?: string;
  /** 0 for a root. */
  level: number;
}

interface TreeRow {
  label: string;
  task: WorkflowTaskRef;
  alsoAfter: string[];
  /** Set when the indentation no longer shows it. */
  level?: number;
}

/** Pre-order walk of the tree where each task hangs under its first upstream. */
function treeRows(order: readonly WorkflowTaskRef[]): TreeRow[] {
  const position = new Map(order.map((t, i) => [t.code, i]));
  const children: number[][] = order.map(() => []);
  const roots: number[] = [];
  order.forEach((t, i) => {
    const first = t.upstream?.find((u) => u !== t.code && position.has(u));
    const parent = first === undefined ? undefined : position.get(first);
    // The parent must come earlier; only a cycle breaks that, and then the task becomes a root.
    if (parent === undefined || parent >= i) roots.push(i);
    else children[parent]?.push(i);
  });

  const rows: TreeRow[] = [];
  // Explicit stack: a long chain must not overflow the call stack.
  const stack: Frame[] = [];
  for (let r = roots.length - 1; r >= 0; r--) {
    stack.push({ i: roots[r] ?? 0, prefix: "", connector: "", level: 0 });
  }
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const { i, prefix, connector, parent, level } = frame;
    const task = order[i] as WorkflowTaskRef;
    const others = new Set((task.upstream ?? []).filter((u) => u !== parent && u !== task.code));
    rows.push({
      label: `${prefix}${connector}${task.code}`,
      task,
      alsoAfter: [...others],
      ...(level > MAX_INDENT_LEVELS ? { level } : {}),
    });

    const kids = children[i] ?? [];
    const indent =
      connector === "" || level >= MAX_INDENT_LEVELS ? "" : connector === LAST ? "   " : "│  ";
    const childPrefix = `${prefix}${indent}`;
    for (let k = kids.length - 1; k >= 0; k--) {
      stack.push({
        i: kids[k] ?? 0,
        prefix: childPrefix,
        connector: k === kids.length - 1 ? LAST : MIDDLE,
        parent: task.code,
        level: level + 1,
      });
    }
  }
  return rows;
}

/**
 * State, `attempt N` and duration of a task's latest attempt; `-` when it has none yet. A
 * SKIPPED task (a CONDITIONS/SWITCH branch not taken) never ran, so it shows no attempt.
 */
function attemptCells(t: TaskInstance | undefined, now: number): [string, string, string] {
  if (!t) return ["-", "", ""];
  const attempt = t.attempt === undefined || t.state === "SKIPPED" ? "" : `attempt ${t.attempt}`;
  let duration = "";
  // A PAUSED logic task (DEPENDENT, SUB_WORKFLOW) keeps `startedAt` without an end: not running.
  if (t.startedAt && t.endedAt) duration = durationBetween(t.startedAt, t.endedAt);
  else if (t.startedAt && ACTIVE_TASK_STATES.has(t.state)) {
    const ms = now - Date.parse(t.startedAt);
    if (Number.isFinite(ms)) {
      duration = `running ${ms < 60_000 ? `${Math.max(0, Math.floor(ms / 1000))}s` : formatDuration(ms)}`;
    }
  }
  return [t.state, attempt, duration];
}

/**
 * The notes after a task: the level when indentation hides it, the error (for FORCED_SUCCESS
 * the failure that was forced over, as `was: …`), a WARN-timeout warning, the task group a
 * SUBMITTED task waits for, the branch a CONDITIONS/SWITCH task took (`→ a, b`), the
 * SUB_WORKFLOW child instance, then the other upstreams.
 */
function noteCell(
  t: TaskInstance | undefined,
  alsoAfter: readonly string[],
  level: number | undefined,
): string {
  const notes: string[] = level === undefined ? [] : [`(level ${level})`];
  if (t?.error) {
    const error = oneLine(t.error, MAX_ERROR_CHARS);
    notes.push(t.state === "FORCED_SUCCESS" ? `was: ${error}` : error);
  }
  if (t?.warning) notes.push(`warning: ${oneLine(t.warning, MAX_ERROR_CHARS)}`);
  if (t?.taskGroup && t.state === "SUBMITTED") {
    notes.push(`waiting for task group ${t.taskGroup}`);
  }
  if (t?.branch) notes.push(`→ ${t.branch.length > 0 ? someNames(t.branch) : "(none)"}`);
  if (t?.subInstanceId) notes.push(`sub-instance ${t.subInstanceId}`);
  if (alsoAfter.length > 0) notes.push(`(also after: ${someNames(alsoAfter)})`);
  return notes.join("  ");
}

/** `a, b, c and 2 more`: the first {@link ALSO_AFTER_NAMES} codes, then a count. */
function someNames(codes: readonly string[]): string {
  const named = codes.slice(0, ALSO_AFTER_NAMES).join(", ");
  const rest = codes.length - ALSO_AFTER_NAMES;
  return `${named}${rest > 0 ? ` and ${rest} more` : ""}`;
}

/** Pads every column but the last; columns empty on every row take no space. */
function alignRows(rows: readonly string[][]): string[] {
  const columns = Math.max(0, ...rows.map((r) => r.length));
  const widths: number[] = [];
  for (let c = 0; c < columns; c++) {
    let w = 0;
    for (const r of rows) w = Math.max(w, (r[c] ?? "").length);
    widths.push(c === 0 ? Math.min(w, MAX_LABEL_WIDTH) : w);
  }
  return rows.map((r) => {
    const cells: string[] = [];
    r.forEach((cell, c) => {
      if ((widths[c] ?? 0) === 0) return;
      cells.push(c === r.length - 1 ? cell : cell.padEnd(widths[c] ?? 0));
    });
    return cells.join("  ").trimEnd();
  });
}

/** One attempt per task code: the highest attempt when the list holds several. */
function latestAttempts(tasks: readonly TaskInstance[]): Map<string, TaskInstance> {
  const latest = new Map<string, TaskInstance>();
  for (const t of tasks) {
    const seen = latest.get(t.code);
    if (!seen || (t.attempt ?? 0) >= (seen.attempt ?? 0)) latest.set(t.code, t);
  }
  return latest;
}

function uniqueByCode(tasks: readonly WorkflowTaskRef[]): WorkflowTaskRef[] {
  const seen = new Set<string>();
  return tasks.filter((t) => {
    if (seen.has(t.code)) return false;
    seen.add(t.code);
    return true;
  });
}

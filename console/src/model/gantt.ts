/**
 * The console's Gantt view model: one row per task in topological order, one bar per attempt
 * (queued part, then run part), and the critical path. Pure: `now` is an argument, times in
 * are the API's ISO strings, times out are epoch ms, positions are px on a {@link TimeAxis}.
 */
import type { TaskInstance } from "../../../lib/cli/api-types.generated.js";
import { type TimeAxis, xOf } from "./time-axis.js";

/** A workflow definition's task as far as ordering goes: `tasks[].code`, `tasks[].upstream`. */
export interface DagTask {
  code: string;
  /** Codes of the tasks it waits for; unknown codes are ignored. */
  upstream?: readonly string[];
}

/**
 * Task codes in topological order: by layer (the longest chain of upstream tasks before it,
 * as the graph view lays columns out left to right), then by definition order. Duplicate codes
 * keep their first definition; upstream codes not in `tasks` are ignored; tasks on a cycle
 * (which the API rejects) come last in definition order rather than throwing. O(tasks + edges).
 */
export function topologicalOrder(tasks: readonly DagTask[]): string[] {
  const index = new Map<string, number>();
  const unique: DagTask[] = [];
  for (const t of tasks) {
    if (index.has(t.code)) continue;
    index.set(t.code, unique.length);
    unique.push(t);
  }
  const n = unique.length;
  const children: number[][] = unique.map(() => []);
  const pending = new Array<number>(n).fill(0);
  unique.forEach((t, i) => {
    for (const code of new Set(t.upstream ?? [])) {
      const u = index.get(code);
      if (u === undefined || u === i) continue;
      children[u]?.push(i);
      pending[i] = (pending[i] ?? 0) + 1;
    }
  });
  // Kahn's algorithm computing each task's layer (longest upstream chain).
  const layer = new Array<number>(n).fill(0);
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (pending[i] === 0) queue.push(i);
  const placed: number[] = [];
  for (let head = 0; head < queue.length; head++) {
    const u = queue[head] as number;
    placed.push(u);
    for (const c of children[u] ?? []) {
      layer[c] = Math.max(layer[c] ?? 0, (layer[u] ?? 0) + 1);
      pending[c] = (pending[c] ?? 0) - 1;
      if (pending[c] === 0) queue.push(c);
    }
  }
  placed.sort((a, b) => (layer[a] ?? 0) - (layer[b] ?? 0) || a - b);
  const order = placed.map((i) => unique[i]?.code as string);
  if (placed.length < n) {
    const seen = new Set(placed);
    for (let i = 0; i < n; i++) if (!seen.has(i)) order.push(unique[i]?.code as string);
  }
  return order;
}

/** Task states in which an attempt without `endedAt` is still going: its bar ends at `now`. */
const ACTIVE_STATES: ReadonlySet<TaskInstance["state"]> = new Set([
  "SUBMITTED",
  "DISPATCHED",
  "RUNNING",
  "NEED_FAULT_TOLERANCE",
]);

/** One attempt on the time line (ms only; see {@link PlacedBar} for px). */
export interface GanttBar {
  code: string;
  /** The attempt number (1 when the API omits it). */
  attempt: number;
  state: TaskInstance["state"];
  /** Epoch ms the attempt was queued: `submittedAt`, else `startedAt`. */
  queuedAtMs: number;
  /** Epoch ms it started running; absent while queued (or when it never ran). */
  startedAtMs?: number;
  /** Epoch ms it ended: `endedAt`, `now` while active, else the last time known; ≥ queuedAtMs. */
  endMs: number;
  /** No `endedAt` yet and an active state: the bar grows with `now`. */
  running: boolean;
  /** Queued time, ms: queuedAtMs → startedAtMs (or → endMs when it never started). */
  queuedMs: number;
  /** Run time, ms: startedAtMs → endMs (0 when it never started). */
  runMs: number;
  /** The attempt belongs to a task on the critical path. */
  critical: boolean;
  /** The attempt as the API returned it (for the hover and the side panel). */
  task: TaskInstance;
}

/** One task's row. */
export interface GanttRow {
  code: string;
  /** Its attempts by attempt number; empty for a task that has not started. */
  bars: GanttBar[];
  /** The task is on the critical path. */
  critical: boolean;
  /** False for a task that has attempts but is not in the given DAG (listed last). */
  inDefinition: boolean;
}

/** Result of {@link buildGantt}. */
export interface GanttModel {
  rows: GanttRow[];
  /** Codes of the critical path, first task first; empty when nothing has started. */
  criticalPath: string[];
  /** Earliest queuedAtMs and latest endMs over all bars (endMs > startMs); absent without bars. */
  range?: { startMs: number; endMs: number };
}

/** Input of {@link buildGantt}. */
export interface GanttInput {
  /** The DAG: the workflow definition's `tasks` (code + upstream), in definition order. */
  tasks: readonly DagTask[];
  /** Every attempt of every task of the instance, in any order. */
  attempts: readonly TaskInstance[];
  /** Epoch ms: the end of attempts still running. */
  nowMs: number;
}

function parseMs(iso: string | undefined): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

function toBar(t: TaskInstance, nowMs: number): GanttBar | undefined {
  const submitted = parseMs(t.submittedAt);
  const started = parseMs(t.startedAt);
  const ended = parseMs(t.endedAt);
  const queuedAtMs = submitted ?? started;
  if (queuedAtMs === undefined) return undefined; // not started: no bar
  const startedAtMs = started !== undefined ? Math.max(started, queuedAtMs) : undefined;
  const from = startedAtMs ?? queuedAtMs;
  const running = ended === undefined && ACTIVE_STATES.has(t.state);
  // Clock skew between machines must not draw a bar backwards.
  const endMs = Math.max(from, ended ?? (running ? nowMs : from));
  return {
    code: t.code,
    attempt: t.attempt ?? 1,
    state: t.state,
    queuedAtMs,
    ...(startedAtMs !== undefined ? { startedAtMs } : {}),
    endMs,
    running,
    queuedMs: (startedAtMs ?? endMs) - queuedAtMs,
    runMs: startedAtMs !== undefined ? endMs - startedAtMs : 0,
    critical: false,
    task: t,
  };
}

/**
 * Builds the rows and the critical path of an instance.
 *
 * Rows: the DAG's tasks in {@link topologicalOrder}, then tasks that have attempts but are
 * not in the DAG, in the order of their first attempt. Bars: one per attempt with a
 * `submittedAt` or `startedAt`, sorted by attempt then queue time (retries and failovers give
 * several).
 *
 * Critical path: starts from the task whose last bar ends last (ties: the later row) and
 * walks upstream, each step to the upstream task that ended latest at or before the moment
 * the current task was first queued; it stops at a task with no such upstream. A task's
 * "end" is the latest end of its attempts, so a running task (end = now) can end the path.
 * O(tasks + edges + attempts·log attempts): well under 100 ms for 1,700 tasks.
 */
export function buildGantt(input: GanttInput): GanttModel {
  const order = topologicalOrder(input.tasks);
  const known = new Set(order);
  const barsByCode = new Map<string, GanttBar[]>();
  const extra: string[] = [];
  for (const t of input.attempts) {
    let list = barsByCode.get(t.code);
    if (!list) {
      list = [];
      barsByCode.set(t.code, list);
      if (!known.has(t.code)) extra.push(t.code);
    }
    const bar = toBar(t, input.nowMs);
    if (bar) list.push(bar);
  }
  const rows: GanttRow[] = [];
  for (const [codes, inDefinition] of [
    [order, true],
    [extra, false],
  ] as const) {
    for (const code of codes) {
      const bars = barsByCode.get(code) ?? [];
      bars.sort((a, b) => a.attempt - b.attempt || a.queuedAtMs - b.queuedAtMs);
      rows.push({ code, bars, critical: false, inDefinition });
    }
  }

  let startMs = Number.POSITIVE_INFINITY;
  let endMs = Number.NEGATIVE_INFINITY;
  // Per task: first queued and last ended, for the critical-path walk.
  const firstQueued = new Map<string, number>();
  const lastEnd = new Map<string, number>();
  let tail: string | undefined;
  for (const row of rows) {
    if (row.bars.length === 0) continue;
    let q = Number.POSITIVE_INFINITY;
    let e = Number.NEGATIVE_INFINITY;
    for (const bar of row.bars) {
      q = Math.min(q, bar.queuedAtMs);
      e = Math.max(e, bar.endMs);
    }
    firstQueued.set(row.code, q);
    lastEnd.set(row.code, e);
    startMs = Math.min(startMs, q);
    if (e >= endMs) {
      endMs = e;
      tail = row.code;
    }
  }

  const criticalPath =
    tail === undefined ? [] : walkCriticalPath(tail, input.tasks, firstQueued, lastEnd);
  const onPath = new Set(criticalPath);
  for (const row of rows) {
    if (!onPath.has(row.code)) continue;
    row.critical = true;
    for (const bar of row.bars) bar.critical = true;
  }
  const model: GanttModel = { rows, criticalPath };
  if (tail !== undefined) model.range = { startMs, endMs: Math.max(endMs, startMs + 1) };
  return model;
}

function walkCriticalPath(
  tail: string,
  tasks: readonly DagTask[],
  firstQueued: ReadonlyMap<string, number>,
  lastEnd: ReadonlyMap<string, number>,
): string[] {
  const upstreamOf = new Map<string, readonly string[]>();
  for (const t of tasks) if (!upstreamOf.has(t.code)) upstreamOf.set(t.code, t.upstream ?? []);
  const path = [tail];
  const visited = new Set(path);
  let current = tail;
  for (;;) {
    const startedAt = firstQueued.get(current) ?? Number.NEGATIVE_INFINITY;
    let best: string | undefined;
    let bestEnd = Number.NEGATIVE_INFINITY;
    for (const up of upstreamOf.get(current) ?? []) {
      const end = lastEnd.get(up);
      if (end === undefined || end > startedAt || visited.has(up)) continue;
      if (end > bestEnd) {
        best = up;
        bestEnd = end;
      }
    }
    if (best === undefined) break;
    path.push(best);
    visited.add(best);
    current = best;
  }
  return path.reverse();
}

/** Default minimum bar width, px: zero-length and short attempts stay visible and hoverable. */
export const MIN_BAR_WIDTH_PX = 3;

/** A bar placed on an axis. */
export interface PlacedBar extends GanttBar {
  /** Left edge (queue start), px from the axis' left edge. */
  x: number;
  /** Total width, px, ≥ the minimum bar width. */
  width: number;
  /** Width of the queued part at the left of the bar, px, 0 ≤ queuedWidth ≤ width. */
  queuedWidth: number;
}

/** A row with placed bars. */
export interface PlacedRow extends Omit<GanttRow, "bars"> {
  bars: PlacedBar[];
}

/**
 * Places the bars of a model on an axis (typically `makeTimeAxis` over `model.range`):
 * x = queue start, width = queue start → end but never under `minBarWidthPx`, the queued part
 * being the first `queuedWidth` px. Cheap enough to call again on every zoom or resize.
 */
export function layoutGantt(
  model: GanttModel,
  axis: TimeAxis,
  minBarWidthPx: number = MIN_BAR_WIDTH_PX,
): PlacedRow[] {
  return model.rows.map((row) => ({
    ...row,
    bars: row.bars.map((bar) => {
      const x = xOf(axis, bar.queuedAtMs);
      const width = Math.max(xOf(axis, bar.endMs) - x, minBarWidthPx);
      const runX = xOf(axis, bar.startedAtMs ?? bar.endMs);
      // An attempt that never started is all queue, however wide the minimum makes it.
      const queuedWidth =
        bar.startedAtMs === undefined ? width : Math.min(Math.max(runX - x, 0), width);
      return { ...bar, x, width, queuedWidth };
    }),
  }));
}

/**
 * The console's Grid view model (like Airflow's grid): the last runs of a workflow as columns,
 * oldest left, its tasks as rows in the Gantt's topological order, a cell per task state.
 * Pure: no clock, no DOM.
 */
import type { TaskInstance } from "../../../lib/cli/api-types.generated.js";
import { type DagTask, topologicalOrder } from "./gantt.js";

/** A cell's state: the task's current attempt state, or `NOT_STARTED` when the run has none. */
export type GridCellState = TaskInstance["state"] | "NOT_STARTED";

/**
 * What the grid needs of a task's current attempt: the detail's TaskInstance, or the list's
 * `include=tasks` cell (`{code, state, attempt}`).
 */
export interface GridTask {
  code: string;
  state: TaskInstance["state"];
  attempt?: number;
}

/** What the grid needs of a run: its current attempts (`GET /v1/instances?include=tasks`). */
export interface GridRun {
  tasks?: readonly GridTask[];
}

/** One task in one run. */
export interface GridCell<T extends GridTask = GridTask> {
  state: GridCellState;
  /** The current attempt, when the run has one for this task. */
  task?: T;
}

/** One task across the runs; `cells[i]` belongs to `columns[i]`. */
export interface GridRow<T extends GridTask = GridTask> {
  code: string;
  /** False for a task that only older definitions (or only some runs) have. */
  inDefinition: boolean;
  cells: GridCell<T>[];
}

/** Result of {@link buildGrid}. */
export interface GridModel<R extends GridRun = GridRun, T extends GridTask = GridTask> {
  /** The runs, oldest first (left) to newest (right). */
  columns: R[];
  rows: GridRow<T>[];
}

/** Input of {@link buildGrid}. */
export interface GridInput<R extends GridRun = GridRun> {
  /** Runs of the workflow, newest first (as `GET /v1/instances` lists them), each with `tasks`. */
  instances: readonly R[];
  /** The workflow's current DAG (definition `tasks`: code + upstream), in definition order. */
  tasks: readonly DagTask[];
  /**
   * Optional older definitions' tasks: tasks missing from `tasks` are placed among the others
   * by their old upstream edges instead of being listed last.
   */
  previousTasks?: readonly (readonly DagTask[])[];
}

/**
 * Builds the grid. Rows: the current DAG's tasks and those of `previousTasks` that it lacks,
 * in {@link topologicalOrder} (current definition first on ties), then any task found only in
 * runs, in the order met from the oldest run. A run that lists a task twice keeps its highest
 * attempt. O(runs × tasks).
 */
export function buildGrid<R extends GridRun, T extends GridTask = NonNullable<R["tasks"]>[number]>(
  input: GridInput<R>,
): GridModel<R, T> {
  const columns = [...input.instances].reverse();
  const current = new Set(input.tasks.map((t) => t.code));
  const merged: DagTask[] = [...input.tasks];
  const mergedCodes = new Set(current);
  for (const older of input.previousTasks ?? []) {
    for (const t of older) {
      if (mergedCodes.has(t.code)) continue;
      mergedCodes.add(t.code);
      merged.push(t);
    }
  }
  const order = topologicalOrder(merged);

  const byRun = columns.map((run) => {
    const byCode = new Map<string, T>();
    for (const t of (run.tasks ?? []) as readonly T[]) {
      const seen = byCode.get(t.code);
      if (!seen || (t.attempt ?? 1) >= (seen.attempt ?? 1)) byCode.set(t.code, t);
      if (!mergedCodes.has(t.code)) {
        mergedCodes.add(t.code);
        order.push(t.code);
      }
    }
    return byCode;
  });

  const rows = order.map((code) => ({
    code,
    inDefinition: current.has(code),
    cells: byRun.map((byCode): GridCell<T> => {
      const task = byCode.get(code);
      return task ? { state: task.state, task } : { state: "NOT_STARTED" };
    }),
  }));
  return { columns, rows };
}

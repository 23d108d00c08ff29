/**
 * How list verbs print (`workflows`, `schedules`, `task-groups`, `triggers`): `{items}` as JSON,
 * or a table, or — for an empty list — a hint on stderr saying how to create the first one.
 */
import type { CliContext } from "./context.js";
import { table, toJson } from "./format.js";

export interface ListView<T> {
  /** Printed to stderr when there is nothing to list, e.g. "no workflows (create one …)". */
  empty: string;
  headers: string[];
  row: (item: T) => string[];
}

/** Prints `items` as `output` ("JSON" or "TABLE") says. */
export function printList<T>(ctx: CliContext, items: T[], output: string, view: ListView<T>) {
  if (output === "JSON") {
    ctx.out(toJson({ items }));
    return;
  }
  if (items.length === 0) {
    ctx.io.stderr.write(`${view.empty}\n`);
    return;
  }
  ctx.out(table(view.headers, items.map(view.row)));
}

/**
 * `shoal apply -f FILE`: create or update workflow definitions from YAML/JSON, all or nothing.
 * Every document is checked first, by the API's own validators (lib/core/validate.ts) and by
 * looking up the SUB_WORKFLOW targets that are not in the file; if any document has a problem,
 * nothing is written and every problem of every document is printed. Then the workflows are
 * PUT children first (a SUB_WORKFLOW target must exist before its parent, or the API refuses
 * the parent), each reported as created, updated or unchanged, with the API's warnings.
 */
import type { Command } from "commander";
import { ShoalError } from "../../core/errors.js";
import type { TaskDefinition } from "../../core/model.js";
import { NAME_PATTERN, parseWorkflowDefinition } from "../../core/validate.js";
import type { WorkflowWritten } from "../api-types.js";
import type { CliContext } from "../context.js";
import { loadWorkflowDocuments, type WorkflowDocument } from "../documents.js";
import { EXIT } from "../errors.js";
import { ApiError, seg } from "../http.js";

/** Registers `apply`. */
export function registerApply(program: Command, ctx: CliContext): void {
  program
    .command("apply")
    .description("create or update workflow definitions from a YAML or JSON file")
    .requiredOption(
      "-f, --file <file>",
      "definition file (YAML documents separated by ---, or JSON; - for stdin)",
    )
    .addHelpText(
      "after",
      "\nEach document holds a top-level `name` plus the WorkflowDefinition fields.\n" +
        "A file with one document may omit `name`: the file name is used.\n" +
        "Every document is checked before anything is written: one invalid document and\n" +
        "none is applied. Sub-workflows are applied before the workflows that run them.",
    )
    .action(async (opts: { file: string }) => {
      const docs = await loadWorkflowDocuments(opts.file);
      const plan = await planApply(ctx, docs);
      if (plan.problems.length > 0) {
        for (const p of plan.problems) ctx.err(`${p.name}: ${p.message}`);
        if (docs.length > 1) {
          ctx.err(`nothing applied: ${plan.invalid} of ${docs.length} workflows have errors`);
        }
        ctx.exitCode = EXIT.error;
        return;
      }
      await applyInOrder(ctx, plan.order);
    });
}

/** One problem of one document, printed as `error: <name>: <message>`. */
interface Problem {
  name: string;
  message: string;
}

/** What `apply` will do: the documents in the order to PUT them, or why it will do nothing. */
interface ApplyPlan {
  order: WorkflowDocument[];
  problems: Problem[];
  /** How many documents have a problem. */
  invalid: number;
}

/**
 * Checks every document and orders them children first.
 * @throws CliError when the API cannot be reached (to look up a SUB_WORKFLOW target).
 */
async function planApply(ctx: CliContext, docs: readonly WorkflowDocument[]): Promise<ApplyPlan> {
  const problems: Problem[] = [];
  const bad = new Set<string>();
  const fail = (name: string, message: string) => {
    problems.push({ name, message });
    bad.add(name);
  };
  const byName = new Map<string, WorkflowDocument>();
  const position = new Map<string, number>();
  for (const [i, doc] of docs.entries()) {
    const first = position.get(doc.name);
    if (first !== undefined) {
      fail(doc.name, `document ${i + 1} has the same name as document ${first + 1}`);
      continue;
    }
    byName.set(doc.name, doc);
    position.set(doc.name, i);
  }
  // SUB_WORKFLOW targets of each document: in the file (edges of the order) or on the server.
  const children = new Map<string, string[]>();
  const onServer = new Map<string, boolean>();
  const exists = async (name: string) => {
    let known = onServer.get(name);
    if (known === undefined) {
      known = await workflowExists(ctx, name);
      onServer.set(name, known);
    }
    return known;
  };
  for (const doc of byName.values()) {
    if (!NAME_PATTERN.test(doc.name)) {
      fail(doc.name, "name: must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$");
    }
    let tasks: TaskDefinition[];
    try {
      tasks = parseWorkflowDefinition(doc.body).tasks;
    } catch (err) {
      if (!(err instanceof ShoalError)) throw err;
      for (const d of err.details) fail(doc.name, d.path ? `${d.path}: ${d.message}` : d.message);
      continue;
    }
    const mine: string[] = [];
    for (const [i, task] of tasks.entries()) {
      if (task.type !== "SUB_WORKFLOW") continue;
      const path = `tasks[${i}].workflow`;
      if (task.workflow === doc.name) {
        fail(doc.name, `${path}: a workflow cannot run itself as a sub-workflow`);
      } else if (byName.has(task.workflow)) mine.push(task.workflow);
      else if (!(await exists(task.workflow))) {
        fail(
          doc.name,
          `${path}: workflow '${task.workflow}' does not exist (not in this file, not on the server)`,
        );
      }
    }
    children.set(doc.name, mine);
  }
  const { order, cycle } = childrenFirst([...byName.keys()], children);
  if (cycle) {
    fail(cycle[0] as string, `sub-workflow cycle in this file: ${cycle.join(" -> ")}`);
    for (const name of cycle) bad.add(name);
  }
  // Document by document, in file order (sort is stable: each one's problems keep their order).
  problems.sort((a, b) => (position.get(a.name) ?? 0) - (position.get(b.name) ?? 0));
  return {
    order: order.map((name) => byName.get(name) as WorkflowDocument),
    problems,
    invalid: bad.size,
  };
}

/** Whether the server has workflow `name` (GET answers 200, not 404). */
async function workflowExists(ctx: CliContext, name: string): Promise<boolean> {
  try {
    await ctx.api().get(`/v1/workflows/${seg(name)}`);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return false;
    throw err;
  }
}

/**
 * `names` ordered so that every workflow comes after the workflows it runs as sub-workflows
 * (depth-first, children in task order, otherwise file order), or a cycle of them
 * (`a -> b -> a`: a runs b, b runs a).
 */
export function childrenFirst(
  names: readonly string[],
  children: ReadonlyMap<string, readonly string[]>,
): { order: string[]; cycle?: string[] } {
  const order: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const s = state.get(name);
    if (s === "done") return undefined;
    if (s === "visiting") return [...path.slice(path.indexOf(name)), name];
    state.set(name, "visiting");
    path.push(name);
    for (const child of children.get(name) ?? []) {
      const cycle = visit(child);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(name, "done");
    order.push(name);
    return undefined;
  };
  for (const name of names) {
    const cycle = visit(name);
    if (cycle) return { order, cycle };
  }
  return { order };
}

/** How `apply` words each outcome (the API's `change`; 201/200 from a server without it). */
const CHANGE_WORDS: Record<string, string> = {
  CREATED: "created",
  UPDATED: "updated",
  UNCHANGED: "unchanged",
};

/**
 * PUTs the documents in order. The API still validates each; should one be refused (or the
 * API fail), the rest are not sent, since a parent after a failed child would fail too.
 */
async function applyInOrder(ctx: CliContext, docs: readonly WorkflowDocument[]): Promise<void> {
  for (const [i, doc] of docs.entries()) {
    let res: { status: number; body: WorkflowWritten };
    try {
      res = await ctx.api().put<WorkflowWritten>(`/v1/workflows/${seg(doc.name)}`, doc.body);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      ctx.err(`${doc.name}: ${err.message}`);
      const rest = docs.slice(i + 1).map((d) => d.name);
      if (rest.length > 0) ctx.err(`not applied: ${rest.join(", ")}`);
      ctx.exitCode = EXIT.error;
      return;
    }
    const change = res.body.change ?? (res.status === 201 ? "CREATED" : "UNCHANGED");
    ctx.out(`${doc.name}: version ${res.body.version} (${CHANGE_WORDS[change] ?? change})`);
    for (const w of res.body.warnings ?? []) {
      ctx.io.stderr.write(`warning: ${doc.name}: ${w.path ? `${w.path}: ` : ""}${w.message}\n`);
    }
  }
}

/**
 * `shoal apply -f FILE`: create or update workflow definitions from YAML/JSON, all or nothing.
 * Every document is checked first: that it reads (YAML, a `name`), by the API's own validators
 * (lib/core/validate.ts), and by looking up the SUB_WORKFLOW targets that are not in the file
 * (they must exist, and must not run the document's workflow again: sub-workflow-cycle.ts, as
 * the API checks). If any document has a problem, nothing is written and every problem of every
 * document is printed. Then the workflows are PUT children first (a SUB_WORKFLOW target must
 * exist before its parent, or the API refuses the parent), each reported as created, updated or
 * unchanged (and released ONLINE or OFFLINE when its `releaseState` changed the workflow's),
 * with the API's warnings.
 */
import type { Command } from "commander";
import { RequestError } from "../../core/errors.js";
import type { TaskDefinition } from "../../core/model.js";
import { pathBack, subWorkflowTargets } from "../../core/sub-workflow-cycle.js";
import { NAME_PATTERN, parseWorkflowDefinition } from "../../core/validate.js";
import type { WorkflowDetail, WorkflowWritten } from "../api-types.js";
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
      const file = await loadWorkflowDocuments(opts.file);
      const plan = await planApply(ctx, file.documents, file.problems.length > 0);
      // Every problem in file order: a document that does not read, then each one's checks.
      const problems = [
        ...file.problems,
        ...plan.problems.map((p) => ({ position: p.position, message: `${p.name}: ${p.message}` })),
      ].sort((a, b) => a.position - b.position);
      if (problems.length > 0) {
        for (const p of problems) ctx.err(p.message);
        if (file.count > 1) {
          const invalid = file.problems.length + plan.invalid;
          ctx.err(`nothing applied: ${invalid} of ${file.count} workflows have errors`);
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
  /** The document's number in the file. */
  position: number;
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
 * Checks every document and orders them children first. `unreadable`: some documents of the
 * file could not be read, so a SUB_WORKFLOW target may be one of them.
 * @throws CliError when the API cannot be reached (to look up a SUB_WORKFLOW target).
 */
async function planApply(
  ctx: CliContext,
  docs: readonly WorkflowDocument[],
  unreadable: boolean,
): Promise<ApplyPlan> {
  const problems: Problem[] = [];
  const bad = new Set<string>();
  const byName = new Map<string, WorkflowDocument>();
  const fail = (name: string, message: string) => {
    problems.push({ name, position: byName.get(name)?.position ?? 0, message });
    bad.add(name);
  };
  for (const doc of docs) {
    const first = byName.get(doc.name);
    if (first !== undefined) {
      problems.push({
        name: doc.name,
        position: doc.position,
        message: `document ${doc.position} has the same name as document ${first.position}`,
      });
      bad.add(doc.name);
      continue;
    }
    byName.set(doc.name, doc);
  }
  // SUB_WORKFLOW targets of each document: in the file (edges of the order) or on the server.
  const children = new Map<string, string[]>();
  const tasksOf = new Map<string, TaskDefinition[]>();
  const onServer = serverTargets(ctx);
  const missing = unreadable
    ? "does not exist (not on the server, not in a document of this file that could be read)"
    : "does not exist (not in this file, not on the server)";
  for (const doc of byName.values()) {
    if (!NAME_PATTERN.test(doc.name)) {
      fail(doc.name, "name: must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$");
    }
    let tasks: TaskDefinition[];
    try {
      tasks = parseWorkflowDefinition(doc.body).tasks;
    } catch (err) {
      if (!(err instanceof RequestError)) throw err;
      for (const d of err.details) fail(doc.name, d.path ? `${d.path}: ${d.message}` : d.message);
      continue;
    }
    tasksOf.set(doc.name, tasks);
    const mine: string[] = [];
    for (const [i, task] of tasks.entries()) {
      if (task.type !== "SUB_WORKFLOW") continue;
      const path = `tasks[${i}].workflow`;
      if (task.workflow === doc.name) {
        fail(doc.name, `${path}: a workflow cannot run itself as a sub-workflow`);
      } else if (byName.has(task.workflow)) mine.push(task.workflow);
      else if ((await onServer(task.workflow)) === undefined) {
        fail(doc.name, `${path}: workflow '${task.workflow}' ${missing}`);
      }
    }
    children.set(doc.name, mine);
  }
  await checkCyclesThroughServer(byName, tasksOf, onServer, fail);
  const { order, cycle } = childrenFirst([...byName.keys()], children);
  if (cycle) {
    fail(cycle[0] as string, `sub-workflow cycle in this file: ${cycle.join(" -> ")}`);
    for (const name of cycle) bad.add(name);
  }
  // Document by document, in file order (sort is stable: each one's problems keep their order).
  problems.sort((a, b) => a.position - b.position);
  return {
    order: order.map((name) => byName.get(name) as WorkflowDocument),
    problems,
    invalid: bad.size,
  };
}

/**
 * The SUB_WORKFLOW targets of a workflow's latest version on the server, or undefined when the
 * server has no such workflow (GET answers 404); each workflow is read once.
 */
function serverTargets(ctx: CliContext): (name: string) => Promise<string[] | undefined> {
  const read = new Map<string, Promise<string[] | undefined>>();
  return (name) => {
    let answer = read.get(name);
    if (!answer) {
      answer = readTargets(ctx, name);
      read.set(name, answer);
    }
    return answer;
  };
}

async function readTargets(ctx: CliContext, name: string): Promise<string[] | undefined> {
  try {
    const wf = await ctx.api().get<WorkflowDetail>(`/v1/workflows/${seg(name)}`);
    const tasks = Array.isArray(wf.tasks) ? (wf.tasks as unknown as TaskDefinition[]) : [];
    return subWorkflowTargets(tasks);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

/**
 * A document whose SUB_WORKFLOW target on the server runs it again (directly, or through other
 * workflows on the server or in the file, the file's version of a workflow replacing the
 * server's; sub-workflow-cycle.ts) is refused as the API would refuse it: one problem at the
 * task, naming the cycle. Cycles within the file are childrenFirst's.
 */
async function checkCyclesThroughServer(
  byName: ReadonlyMap<string, WorkflowDocument>,
  tasksOf: ReadonlyMap<string, readonly TaskDefinition[]>,
  onServer: (name: string) => Promise<string[] | undefined>,
  fail: (name: string, message: string) => void,
): Promise<void> {
  const childrenOf = async (name: string) => {
    const mine = tasksOf.get(name);
    if (mine) return subWorkflowTargets(mine);
    return byName.has(name) ? [] : ((await onServer(name)) ?? []);
  };
  for (const [name, tasks] of tasksOf) {
    const seen = new Set<string>();
    for (const [i, task] of tasks.entries()) {
      if (task.type !== "SUB_WORKFLOW" || byName.has(task.workflow)) continue;
      if (seen.has(task.workflow)) continue;
      seen.add(task.workflow);
      if ((await onServer(task.workflow)) === undefined) continue;
      const back = await pathBack(task.workflow, name, childrenOf);
      if (!back) continue;
      const cycle = [name, ...back];
      const stored = [...new Set(cycle.filter((w) => !byName.has(w)))];
      fail(
        name,
        `tasks[${i}].workflow: sub-workflow cycle: ${cycle.join(" -> ")} (${stored.join(", ")} as on the server); its runs would nest until they fail`,
      );
    }
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
    // The body's releaseState took the workflow ONLINE or OFFLINE: not "unchanged" for a user.
    const released =
      res.body.previousReleaseState !== undefined ? `; released ${res.body.releaseState}` : "";
    ctx.out(
      `${doc.name}: version ${res.body.version} (${CHANGE_WORDS[change] ?? change}${released})`,
    );
    for (const w of res.body.warnings ?? []) {
      ctx.io.stderr.write(`warning: ${doc.name}: ${w.path ? `${w.path}: ` : ""}${w.message}\n`);
    }
  }
}

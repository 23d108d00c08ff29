/**
 * The log endpoint's answer for a task no worker ran (a logic task, or a SKIPPED task): lines
 * saying what the dispatcher decided (lib/core/decision-log.ts), paged by a line-count token
 * (`d<n>`) so that `shoal logs --follow` sees a sub-workflow's end line once it comes.
 */
import { skipCause } from "../core/branches.js";
import { currentAttemptCandidates } from "../core/current-attempts.js";
import { decisionLines } from "../core/decision-log.js";
import { currentAttempt, iso } from "../core/explain-facts.js";
import { isFinalTaskState } from "../core/model.js";
import { ParamError } from "../core/params.js";
import { attemptOf } from "../core/progress.js";
import type { LoadedDefinition } from "../engine/definitions.js";
import { taskParams } from "../engine/engine-deps.js";
import { withUpstreamOutputs } from "../engine/upstream-outputs.js";
import type { InstanceRecord, TaskInstanceRecord } from "../store/records.js";
import { isSecretName, MASK } from "../tasks/render-task.js";
import type { ApiDeps } from "./deps.js";
import { instanceDefinition } from "./instance-definition.js";

const TOKEN = /^d(\d{1,7})$/;

/** A log page: `{lines, nextToken}` as `GET …/log` answers (docs/api.md). */
export interface DecisionLogPage {
  lines: Array<{ timestamp: string; message: string }>;
  nextToken?: string;
}

/**
 * The decision log of `record` (an attempt of a logic or SKIPPED task of `inst`).
 * @throws RequestError ValidationError for a `nextToken` neither this log nor the log store made.
 */
export async function decisionLog(
  deps: ApiDeps,
  inst: InstanceRecord,
  record: TaskInstanceRecord,
  page: { limit: number; nextToken?: string },
): Promise<DecisionLogPage> {
  let offset = 0;
  if (page.nextToken !== undefined) {
    const m = TOKEN.exec(page.nextToken);
    if (m) offset = Number(m[1]);
    else {
      // A log store's token, handed out while the task had not started (it was read as a
      // worker log then): the decision log starts from its beginning. The store still refuses
      // a token it never made (400).
      const key = { workflow: inst.workflow, instanceId: inst.instanceId, code: record.code };
      await deps.logs.read(
        { ...key, attempt: record.attempt },
        { nextToken: page.nextToken, limit: 1 },
      );
    }
  }
  const stored = await instanceDefinition(deps, inst.workflow, inst.version);
  const tasks = stored?.definition.tasks ?? [];
  const index = tasks.findIndex((t) => t.code === record.code);
  const task = tasks[index];
  let lines: DecisionLogPage["lines"] = [];
  if (task && stored) {
    const dag = stored.dag;
    const current = attemptOf(inst.progress, index) === record.attempt;
    const ups = dag.upstream[index] ?? [];
    const attempts =
      task.type === "CONDITIONS" ? await deps.store.listTaskInstances(inst.instanceId) : [];
    const facts = { instance: inst, tasks, attempts };
    const child =
      task.type === "SUB_WORKFLOW" && record.subInstanceId
        ? await deps.store.getInstance(record.subInstanceId)
        : undefined;
    const skipped =
      record.state === "SKIPPED" && current
        ? skipCause(tasks, dag.upstream, inst.progress.slots, index)
        : undefined;
    lines = decisionLines({
      task,
      attempt: record,
      ...(task.type === "CONDITIONS"
        ? {
            upstream: ups.map((u) => ({
              code: tasks[u]?.code ?? "?",
              state: currentAttempt(facts, u)?.state ?? "NOT_STARTED",
            })),
          }
        : {}),
      ...(skipped ? { skipped } : {}),
      ...(child ? { childState: child.state } : {}),
      ...(task.type === "SWITCH" &&
      currentAttemptCandidates(inst.progress, index).includes(record.attempt)
        ? switchParams(
            await withUpstreamOutputs(deps.store, inst, stored, [index]),
            stored,
            index,
            record,
          )
        : {}),
    }).map((l) => ({ timestamp: iso(l.at), message: l.message }));
  }
  const out = lines.slice(offset, offset + page.limit);
  const next = offset + out.length;
  const more = !isFinalTaskState(record.state) || next < lines.length;
  return { lines: out, ...(more ? { nextToken: `d${next}` } : {}) };
}

/**
 * The parameters a SWITCH of the current round decided on, resolved again as the dispatcher
 * resolved them (the instance's parameters and its upstream tasks' OUT parameters), values of
 * secret-like names masked (lib/tasks/render-task.ts isSecretName). None when they no longer
 * resolve.
 */
function switchParams(
  inst: InstanceRecord,
  def: LoadedDefinition,
  index: number,
  record: TaskInstanceRecord,
): { params?: Record<string, string> } {
  let params: Record<string, string>;
  try {
    params = taskParams(inst, def, index, record.attempt);
  } catch (e) {
    if (e instanceof ParamError) return {};
    throw e;
  }
  for (const name of Object.keys(params)) if (isSecretName(name)) params[name] = MASK;
  return { params };
}

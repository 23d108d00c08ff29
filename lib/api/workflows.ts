/** Workflow definition endpoints (docs/api.md "Workflow definitions"). */
import { isDeepStrictEqual } from "node:util";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { conflict, type ErrorDetail, notFound, validationError } from "../core/errors.js";
import { RELEASE_STATES, type ReleaseState, type WorkflowDefinition } from "../core/model.js";
import { unresolvedParamReferences } from "../core/param-references.js";
import { pathBack, subWorkflowTargets } from "../core/sub-workflow-cycle.js";
import { checkName, parseWorkflowDefinition } from "../core/validate.js";
import type { WorkflowHead } from "../store/records.js";
import type { ApiDeps } from "./deps.js";
import {
  asObject,
  json,
  onlyFields,
  parseBody,
  parseLimit,
  parsePositiveInt,
  query,
} from "./http.js";
import { channelWarnings, iso, workflowSummary } from "./present.js";
import {
  MAX_LIMIT_WITH_SUMMARY,
  parseWorkflowInclude,
  summariseWorkflows,
} from "./workflow-summary.js";

/** Definitions compare without their release state (that lives on the head, not the version). */
function sameDefinition(a: WorkflowDefinition, b: WorkflowDefinition): boolean {
  const { releaseState: _a, ...ra } = a;
  const { releaseState: _b, ...rb } = b;
  return isDeepStrictEqual(JSON.parse(JSON.stringify(ra)), JSON.parse(JSON.stringify(rb)));
}

function headResult(h: WorkflowHead, createdAt: number) {
  return {
    name: h.name,
    version: h.latestVersion,
    releaseState: h.releaseState,
    createdAt: iso(createdAt),
  };
}

/**
 * What a PUT did: CREATED a new workflow (also a name whose workflow was deleted), UPDATED an
 * existing one with a new version, or left it UNCHANGED (the body equals the latest version).
 * An optional field added to the contract's response, so a client (`shoal apply`) can say
 * "created" or "updated" without a GET that could race with another writer.
 */
type WorkflowChange = "CREATED" | "UPDATED" | "UNCHANGED";

/**
 * Most warnings one PUT answer lists: a generated definition of 10,000 tasks with the same
 * typo in each would otherwise answer megabytes (a Lambda response holds at most 6 MB).
 */
export const MAX_WARNINGS = 100;

/**
 * The PUT response: the contract's fields, `change`, `warnings` when there are any, and
 * `previousReleaseState` when the body's `releaseState` changed the workflow's (an UNCHANGED
 * definition can still take a workflow ONLINE or OFFLINE): optional fields added to the
 * contract's, so that a client can say so.
 */
function putResult(
  h: WorkflowHead,
  createdAt: number,
  change: WorkflowChange,
  warnings: readonly ErrorDetail[],
  previous?: ReleaseState,
) {
  const listed =
    warnings.length <= MAX_WARNINGS
      ? warnings
      : [
          ...warnings.slice(0, MAX_WARNINGS),
          { path: "", message: `${warnings.length - MAX_WARNINGS} more warnings are not listed` },
        ];
  return {
    ...headResult(h, createdAt),
    change,
    ...(previous !== undefined && previous !== h.releaseState
      ? { previousReleaseState: previous }
      : {}),
    ...(listed.length > 0 ? { warnings: listed } : {}),
  };
}

/**
 * SUB_WORKFLOW tasks must name another workflow that exists, and must not close a cycle: a
 * target whose stored latest version runs `name` again, directly or through others (walked
 * SUB_WORKFLOW_WALK_DEPTH levels deep, sub-workflow-cycle.ts). 400 at `tasks[i].workflow`
 * otherwise, nothing written. Two PUTs racing to close one cycle can both pass; the engine's
 * depth limit then fails the runs.
 */
async function checkSubWorkflows(deps: ApiDeps, name: string, def: WorkflowDefinition) {
  const details: Array<{ path: string; message: string }> = [];
  const read = new Map<string, Promise<string[]>>();
  const childrenOf = (w: string) => {
    let children = read.get(w);
    if (!children) {
      children = storedTargets(deps, w);
      read.set(w, children);
    }
    return children;
  };
  const seen = new Set<string>();
  for (const [i, t] of def.tasks.entries()) {
    if (t.type !== "SUB_WORKFLOW") continue;
    const path = `tasks[${i}].workflow`;
    if (t.workflow === name) {
      details.push({ path, message: "a workflow cannot run itself as a sub-workflow" });
      continue;
    }
    const head = await deps.store.getWorkflowHead(t.workflow);
    if (!head || head.deleted) {
      details.push({ path, message: `workflow '${t.workflow}' does not exist; create it first` });
      continue;
    }
    if (seen.has(t.workflow)) continue; // one message per target
    seen.add(t.workflow);
    const back = await pathBack(t.workflow, name, childrenOf);
    if (back) {
      details.push({
        path,
        message: `sub-workflow cycle: ${[name, ...back].join(" -> ")} (as the other workflows' latest versions stand); its runs would nest until they fail`,
      });
    }
  }
  if (details.length > 0) throw validationError(details);
}

/** The workflows the stored latest version of `name` runs as sub-workflows; none when it is gone. */
async function storedTargets(deps: ApiDeps, name: string): Promise<string[]> {
  const head = await deps.store.getWorkflowHead(name);
  if (!head || head.deleted) return [];
  const stored = await deps.store.getDefinition(name, head.latestVersion);
  return stored ? subWorkflowTargets(stored.definition.tasks) : [];
}

/**
 * PUT /v1/workflows/{name}: 201 with a new version, 200 when the body equals the latest. Both
 * carry `change`, `previousReleaseState` when the body's `releaseState` changed the workflow's,
 * and `warnings`: a `${name}` reference in the definition that nothing in it can set
 * (param-references.ts: a run's parameters may still set it), an alert rule's channel that the
 * deployment does not configure (alert-rules.ts `unconfiguredChannels`: the definition may be
 * meant for another deployment); the definition is stored all the same.
 */
export async function putWorkflow(
  deps: ApiDeps,
  name: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const def = parseWorkflowDefinition(asObject(parseBody(event, { allowYaml: true })));
  await checkSubWorkflows(deps, name, def);
  const warnings = [
    ...unresolvedParamReferences(def),
    ...channelWarnings(deps.alertChannels, def.alerts),
  ];
  for (let tries = 0; tries < 5; tries++) {
    const now = deps.now();
    const head = await deps.store.getWorkflowHead(name);
    const live = head && !head.deleted ? head : undefined;
    const latest = live ? await deps.store.getDefinition(name, live.latestVersion) : undefined;
    if (live && latest && sameDefinition(latest.definition, def)) {
      let current = live;
      if (def.releaseState && def.releaseState !== live.releaseState) {
        current = (await deps.store.setReleaseState(name, def.releaseState, now)) ?? live;
      }
      return json(
        200,
        putResult(current, latest.createdAt, "UNCHANGED", warnings, live.releaseState),
      );
    }
    const latestVersion = head?.latestVersion ?? 0;
    // A version number left by a writer that lost the race (or crashed) is skipped, never reused.
    let version = latestVersion + 1;
    while (!(await deps.store.putDefinition({ name, version, definition: def, createdAt: now })))
      version++;
    const next: WorkflowHead = {
      name,
      latestVersion: version,
      releaseState: def.releaseState ?? live?.releaseState ?? "ONLINE",
      ...(def.displayName !== undefined ? { displayName: def.displayName } : {}),
      ...(def.description !== undefined ? { description: def.description } : {}),
      createdAt: live?.createdAt ?? now,
      updatedAt: now,
    };
    if (await deps.store.putWorkflowHead(next, latestVersion)) {
      const change = live ? "UPDATED" : "CREATED";
      return json(201, putResult(next, now, change, warnings, live?.releaseState));
    }
  }
  throw conflict(`workflow '${name}' is being changed concurrently; try again`);
}

export async function getWorkflow(
  deps: ApiDeps,
  name: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const head = await deps.store.getWorkflowHead(name);
  if (!head || head.deleted) throw notFound(`workflow '${name}' does not exist`);
  const version = parsePositiveInt(query(event).version, "version") ?? head.latestVersion;
  const stored =
    version <= head.latestVersion ? await deps.store.getDefinition(name, version) : undefined;
  if (!stored)
    throw notFound(
      `workflow '${name}' has no version ${version} (latest is ${head.latestVersion})`,
    );
  const { releaseState: _ignored, ...def } = stored.definition;
  return json(200, {
    ...def,
    name,
    version,
    releaseState: head.releaseState,
    createdAt: iso(stored.createdAt),
  });
}

/**
 * GET /v1/workflows?limit=&nextToken=&include=summary: sorted by name; with `include=summary`
 * each item also carries `nextFireAt`, `nextFireTimezone` and `lastRuns` (workflow-summary.ts),
 * and `limit` is at most 50.
 */
export async function listWorkflows(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  const summary = parseWorkflowInclude(q.include);
  const limit = parseLimit(q.limit, 50, summary ? MAX_LIMIT_WITH_SUMMARY : 200);
  const page = await deps.store.listWorkflows(limit, q.nextToken || undefined);
  return json(200, {
    items: summary ? await summariseWorkflows(deps, page.items) : page.items.map(workflowSummary),
    ...(page.nextToken ? { nextToken: page.nextToken } : {}),
  });
}

export async function deleteWorkflow(
  deps: ApiDeps,
  name: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const head = await deps.store.getWorkflowHead(name);
  if (!head || head.deleted) throw notFound(`workflow '${name}' does not exist`);
  if ((await deps.store.hasUnfinishedInstances(name)) || (await deps.store.hasPendingStart(name))) {
    throw conflict(`workflow '${name}' has instances that are not finished; stop them first`);
  }
  await deps.store.deleteWorkflow(name);
  return { statusCode: 204 };
}

export async function releaseWorkflow(
  deps: ApiDeps,
  name: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const body = onlyFields(event, ["state"]);
  const state = body.state;
  if (typeof state !== "string" || !(RELEASE_STATES as readonly string[]).includes(state)) {
    throw validationError([{ path: "state", message: "must be ONLINE or OFFLINE" }]);
  }
  const head = await deps.store.setReleaseState(name, state as ReleaseState, deps.now());
  if (!head) throw notFound(`workflow '${name}' does not exist`);
  return json(200, workflowSummary(head));
}

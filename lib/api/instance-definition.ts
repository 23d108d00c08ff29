/**
 * The definition version an instance runs, as the API's instance reads (`GET` instance, explain,
 * logs, attempts) get it: from the process's cache of versions (lib/engine/definitions.ts;
 * versions are immutable), so a client polling an instance does not fetch and unzip its
 * definition (up to ~400 KB) on every call.
 */
import { notFound, type RequestError } from "../core/errors.js";
import type { LoadedDefinition } from "../engine/definitions.js";
import type { ApiDeps } from "./deps.js";

/** The 404 for an instance whose definition version can no longer be read. */
export function definitionGone(workflow: string, version: number): RequestError {
  return notFound(
    `the definition of workflow '${workflow}' v${version} is gone (deleted with its workflow): the instance's tasks cannot be looked up`,
  );
}

/** The version, or undefined when it can no longer be read (a deleted workflow's). */
export function instanceDefinition(
  deps: ApiDeps,
  workflow: string,
  version: number,
): Promise<LoadedDefinition | undefined> {
  return deps.definitions.get(workflow, version);
}

/**
 * The index of task `code` in the instance's definition (the position of its progress slot).
 * @throws RequestError NotFound naming the version when it has no such task, or saying the
 *   definition is gone when it cannot be read.
 */
export async function taskIndexOf(
  deps: ApiDeps,
  inst: { workflow: string; version: number },
  code: string,
): Promise<{ index: number; def: LoadedDefinition }> {
  const def = await instanceDefinition(deps, inst.workflow, inst.version);
  if (!def) throw definitionGone(inst.workflow, inst.version);
  const index = def.dag.indexOf(code);
  if (index === undefined) {
    throw notFound(`workflow '${inst.workflow}' v${inst.version} has no task '${code}'`);
  }
  return { index, def };
}

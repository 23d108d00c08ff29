/** A stored workflow version as the YAML `shoal apply` takes back. */
import { stringify } from "yaml";
import type { WorkflowDetail } from "./types";

/**
 * The definition of a version as YAML: the fields the API adds to a stored version (`name`,
 * `version`, `createdAt`, and `releaseState`, which is the workflow's, not the version's) are
 * left out, so two versions diff only on what their authors wrote (defaults filled in).
 */
export function definitionYaml(d: WorkflowDetail): string {
  const { name: _n, version: _v, createdAt: _c, releaseState: _r, ...definition } = d;
  return stringify(definition, { lineWidth: 0 });
}

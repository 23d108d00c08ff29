/**
 * The secrets of one task attempt, for the worker (lib/engine/worker.ts): protect the
 * references, let the caller substitute parameters, read the values, put them in
 * (task-secrets.ts), and the rules for what the attempt reports.
 */
import type { WorkerTaskDefinition } from "../core/model.js";
import type { SecretMasker } from "./mask.js";
import { checkMaskable, resolveSecrets } from "./resolve.js";
import type { SecretSource } from "./secret-source.js";
import type { SecretClients } from "./sources.js";
import { applySecrets, protectSecretReferences } from "./task-secrets.js";

/** A task ready to run: parameters substituted and, when it uses secrets, their values in. */
export interface AttemptTask {
  task: WorkerTaskDefinition;
  /** Environment variables holding values, for the task's process only (SHELL). */
  env: Record<string, string>;
  /** Set when the task uses secrets. */
  masker?: SecretMasker;
}

/**
 * `task` with its parameters substituted by `substitute` and its secrets read from `source`
 * (only when it uses any: `source` is not called otherwise).
 * @throws ParamError from `substitute` or for a SHELL reference that cannot be placed safely;
 *   SecretReadError for a secret that cannot be read or used, or whose value is too short to
 *   be masked (resolve.ts, {@link checkMaskable}).
 */
export async function prepareAttemptTask(
  task: WorkerTaskDefinition,
  substitute: (t: WorkerTaskDefinition) => WorkerTaskDefinition,
  source: () => SecretSource,
): Promise<AttemptTask> {
  // References become markers no parameter value can forge.
  const guarded = protectSecretReferences(task);
  const substituted = substitute(guarded?.task ?? task);
  if (!guarded) return { task: substituted, env: {} };
  const values = await resolveSecrets(guarded.names, source());
  checkMaskable(values);
  return applySecrets(substituted, guarded, values);
}

/** The refusal of an OUT parameter whose value held a secret (docs/secrets.md). */
export function secretOutError(name: string): string {
  return `OUT parameter '${name}' would hold a secret value; secrets are never stored as parameters (pass the secret's name instead)`;
}

/** The Secrets Manager and SSM clients of a client bundle, when it has both. */
export function secretClientsOf(clients: Partial<SecretClients>): SecretClients | undefined {
  const { secretsManager, ssm } = clients;
  return secretsManager && ssm
    ? { secretsManager: () => secretsManager.call(clients), ssm: () => ssm.call(clients) }
    : undefined;
}

/**
 * The port through which a worker reads secrets (docs/secrets.md). Adapters: environment
 * variables (env-source.ts) and a local file (file-source.ts) in standalone; AWS Secrets Manager
 * (secrets-manager-source.ts) and SSM Parameter Store (ssm-source.ts) on AWS. A value read is
 * held in memory only, for the attempt that needs it (and a short cache, cached-source.ts).
 */
import type { SecretName } from "../core/secret-references.js";

export interface SecretSource {
  /**
   * The whole secret `name.base` (its `#key` is applied by the caller, lib/secrets/resolve.ts):
   * a string; a structured value (a map in the secrets file) as its JSON text.
   * @returns undefined when this source has no such secret.
   * @throws SecretReadError when the secret may exist but could not be read (access denied,
   *   an unreadable or too open file, throttling, a network failure).
   */
  get(name: SecretName): Promise<string | undefined>;
  /** Where this source looked for `name`, for the "not found" line ("environment variable SHOAL_SECRET_DB"). */
  where(name: SecretName): string;
}

/**
 * A secret that could not be read. The message names the secret and the cause, never a value;
 * the attempt fails with it (and is retried like any failure).
 */
export class SecretReadError extends Error {
  override name = "SecretReadError";
}

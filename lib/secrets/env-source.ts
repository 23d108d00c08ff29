/**
 * Secrets from the worker's own environment: `${secret:NAME}` reads `SHOAL_SECRET_<NAME>`, where
 * <NAME> is the name without `#key`, upper-cased, every character other than A-Z and 0-9
 * becoming `_` (`db-password` → SHOAL_SECRET_DB_PASSWORD, `ssm:/prod/db/pw` →
 * SHOAL_SECRET_SSM__PROD_DB_PW). Task processes never inherit these variables
 * (lib/tasks/shell.ts drops every SHOAL_* of the worker's environment).
 */
import type { SecretName } from "../core/secret-references.js";
import type { SecretSource } from "./secret-source.js";

/** Prefix of the worker's environment variables holding secrets. */
export const SECRET_ENV_PREFIX = "SHOAL_SECRET_";

/** The environment variable holding secret `base` (a name without `#key`). */
export function secretEnvVariable(base: string): string {
  return SECRET_ENV_PREFIX + base.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/** Reads secrets from `env` (the worker's environment, read at each call). */
export class EnvSecretSource implements SecretSource {
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  async get(name: SecretName): Promise<string | undefined> {
    return this.env[secretEnvVariable(name.base)];
  }

  where(name: SecretName): string {
    return `environment variable ${secretEnvVariable(name.base)}`;
  }
}

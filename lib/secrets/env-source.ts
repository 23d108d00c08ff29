/**
 * Secrets from the worker's own environment: `${secret:NAME}` reads `SHOAL_SECRET_<NAME>`, where
 * <NAME> is the name without `#key`, upper-cased, every character other than A-Z and 0-9
 * becoming `_` (`db-password` → SHOAL_SECRET_DB_PASSWORD, `ssm:/prod/db/pw` →
 * SHOAL_SECRET_SSM__PROD_DB_PW); so `prod/db` and `prod-db` read the same variable. Task
 * processes do not inherit these variables (lib/tasks/shell.ts drops every SHOAL_* of the
 * worker's environment), but a task runs as the worker's OS user and can read them in
 * /proc/<worker pid>/environ: this keeps values out of logs, not from other tasks
 * (docs/secrets.md, "What a task can read").
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

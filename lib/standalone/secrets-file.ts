/**
 * The secrets file of `shoal standalone` (docs/secrets.md): `--secrets-file PATH`, else
 * SHOAL_SECRETS_FILE, else `$XDG_CONFIG_HOME/shoal/secrets.yaml` (`~/.config/shoal/secrets.yaml`)
 * when it exists. A file that group or others can read or write is refused at start.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { secretsFileProblem } from "../secrets/file-mode.js";
import { SECRETS_ENV } from "../secrets/sources.js";

/** The default secrets file for `env` (XDG_CONFIG_HOME, else ~/.config). */
export function defaultSecretsFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "shoal", "secrets.yaml");
}

/**
 * The secrets file standalone uses, as an absolute path, or undefined when there is none
 * (nothing given and no default file).
 * @throws Error naming the file, its mode and the `chmod 600` fix when it is too open, or saying
 *   that a file given explicitly does not exist.
 */
export function standaloneSecretsFile(
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const explicit = given ?? (env[SECRETS_ENV.file] || undefined);
  const path = resolve(explicit ?? defaultSecretsFile(env));
  if (explicit === undefined && !existsSync(path)) return undefined;
  const problem = secretsFileProblem(path);
  if (problem) throw new Error(problem);
  return path;
}

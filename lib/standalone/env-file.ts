/**
 * `endpoints.env`: the file `shoal standalone` writes so that `shoal worker` and `shoal sweeper`
 * find it. Read with Node's `util.parseEnv` (dotenv syntax), so values are quoted on the way
 * out: unquoted, a `#` starts a comment and surrounding quotes are stripped, and a data
 * directory such as `/tmp/my dir/#1` would come back cut short.
 */
import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";

/**
 * One `KEY=value` line that `util.parseEnv` reads back as exactly `value`: single quotes
 * (taken literally), else double quotes when the value has no backslash (they expand `\n`),
 * else backticks.
 * @throws Error when the value holds a line break, or all three quote characters, which the
 *   dotenv syntax cannot carry.
 */
export function envFileLine(key: string, value: string): string {
  if (/[\r\n]/.test(value))
    throw new Error(`${key}: a line break cannot be written to an env file`);
  if (!value.includes("'")) return `${key}='${value}'`;
  if (!value.includes('"') && !value.includes("\\")) return `${key}="${value}"`;
  if (!value.includes("`")) return `${key}=\`${value}\``;
  throw new Error(`${key}: a value with ', " and \` cannot be written to an env file`);
}

/** The text of an env file holding `entries`, one line each, ending with a newline. */
export function formatEnvFile(entries: Record<string, string>): string {
  return `${Object.entries(entries)
    .map(([k, v]) => envFileLine(k, v))
    .join("\n")}\n`;
}

/** The file standalone writes in its data dir. */
export const ENDPOINTS_FILE = "endpoints.env";

/**
 * The entries of an env file.
 * @throws the file system's error when it cannot be read.
 */
export function readEnvFileEntries(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parseEnv(readFileSync(file, "utf8")))) {
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** Reads an env file into `env`: over what is there when `override`, else where unset. */
export function readEnvFile(file: string, env: NodeJS.ProcessEnv, override: boolean): void {
  for (const [key, value] of Object.entries(readEnvFileEntries(file))) {
    if (override || env[key] === undefined) env[key] = value;
  }
}

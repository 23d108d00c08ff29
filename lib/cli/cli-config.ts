/**
 * Where the CLI finds Shoal and how it authenticates: the config file written by
 * `shoal config from-stack`, and the resolution of each setting from (highest first) a flag,
 * the environment, that file, and a default — the order the AWS CLI uses ("Configuration and
 * credential file settings", AWS CLI user guide).
 *
 * The file describes one deployment: its auth, region, service and profile apply to its own
 * endpoint. When a flag or SHOAL_ENDPOINT points elsewhere (a local `shoal standalone`), they
 * are set aside, so a saved AWS setup never leaks IAM signing onto another endpoint.
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { DEFAULT_ENDPOINT } from "../standalone/defaults.js";
import { CliError, UsageError } from "./errors.js";
import { detectAwsHost, type SigningService } from "./signing.js";

/** How requests are authenticated: SigV4 (IAM), a bearer token (JWT authorizer), or not at all. */
export const AUTH_MODES = ["iam", "jwt", "none"] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** The environment as the CLI reads it (process.env at call time in `main()`). */
export type Env = Record<string, string | undefined>;

/**
 * The config file's JSON. Every key is optional on reading (a hand-written file may hold a
 * region only); `from-stack` writes endpoint, auth and region, and the rest it finds. Unknown
 * keys are kept out of the way: a newer CLI may add some.
 */
export interface ConfigFile {
  /** API base URL, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com`. */
  endpoint?: string;
  auth?: AuthMode;
  /** Signing region. */
  region?: string;
  /** SigV4 service override (`execute-api` or `lambda`); derived from the host otherwise. */
  service?: SigningService;
  /** AWS profile for credentials (saved when `from-stack --profile` named one). */
  profile?: string;
  /** CloudFormation stack the settings came from. */
  stack?: string;
  /** Resource name prefix of the deployment (stack output Prefix). */
  prefix?: string;
  /** EventBridge bus of triggers (stack output EventBusName). */
  eventBus?: string;
  /** CloudWatch log group of task logs (stack output TaskLogGroup). */
  taskLogGroup?: string;
  /** CloudWatch dashboard (stack output DashboardUrl). */
  dashboardUrl?: string;
}

const STRING_KEYS = [
  "endpoint",
  "region",
  "profile",
  "stack",
  "prefix",
  "eventBus",
  "taskLogGroup",
  "dashboardUrl",
] as const;

/**
 * The config file's path: `$SHOAL_CONFIG`, else `$XDG_CONFIG_HOME/shoal/config.json`, else
 * `~/.config/shoal/config.json` (the XDG Base Directory default; `~` is $HOME when set).
 */
export function configFilePath(env: Env): string {
  if (env.SHOAL_CONFIG) return env.SHOAL_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "shoal", "config.json");
}

/**
 * Validates the file's text.
 * @throws CliError naming `path` and the problem (invalid JSON, not an object, a key of the
 *   wrong type, an unknown auth mode or service).
 */
export function parseConfigFile(text: string, path: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CliError(`config file ${path} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new CliError(`config file ${path} must hold a JSON object`);
  }
  const obj = raw as Record<string, unknown>;
  const out: ConfigFile = {};
  for (const key of STRING_KEYS) {
    const v = obj[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== "string") throw new CliError(`config file ${path}: "${key}" must be a string`);
    out[key] = v;
  }
  if (out.endpoint !== undefined && !isHttpUrl(out.endpoint)) {
    throw new CliError(`config file ${path}: "endpoint" must be an http(s) URL`);
  }
  if (obj.auth !== undefined && obj.auth !== null) {
    out.auth = parseAuth(obj.auth, `config file ${path}: "auth"`, CliError);
  }
  if (obj.service !== undefined && obj.service !== null) {
    if (obj.service !== "execute-api" && obj.service !== "lambda") {
      throw new CliError(`config file ${path}: "service" must be "execute-api" or "lambda"`);
    }
    out.service = obj.service;
  }
  return out;
}

function isHttpUrl(s: string): boolean {
  try {
    const url = new URL(s);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function parseAuth(value: unknown, what: string, Err: new (message: string) => CliError): AuthMode {
  const v = typeof value === "string" ? value.toLowerCase() : value;
  const hit = AUTH_MODES.find((m) => m === v);
  if (hit === undefined) {
    throw new Err(`${what} is '${String(value)}': expected one of ${AUTH_MODES.join(", ")}`);
  }
  return hit;
}

/**
 * Reads the config file; undefined when there is none.
 * @throws CliError naming the file when it cannot be read or is invalid.
 */
export function loadConfigFile(path: string): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new CliError(`cannot read config file ${path}: ${code ?? (err as Error).message}`, {
      cause: err,
    });
  }
  return parseConfigFile(text, path);
}

/**
 * Writes the config file atomically (a temporary file in the same directory, then rename,
 * so a reader never sees half a file) with mode 0600: it names accounts and endpoints.
 * Creates the directory (0700) when missing.
 * @throws CliError naming the file when it cannot be written.
 */
export async function saveConfigFile(path: string, config: ConfigFile): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    // The mode given to writeFile is filtered by the umask; state it exactly.
    await chmod(tmp, 0o600);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot write config file ${path}: ${code ?? (err as Error).message}`, {
      cause: err,
    });
  }
}

/** Removes the config file; returns whether there was one. */
export async function deleteConfigFile(path: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  try {
    await rm(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot remove config file ${path}: ${code ?? (err as Error).message}`, {
      cause: err,
    });
  }
  return true;
}

/** The global options as given on the command line (undefined: not given). */
export interface GlobalFlags {
  endpoint?: string;
  region?: string;
  auth?: string;
  profile?: string;
}

/**
 * Where a setting came from: a flag, an environment variable, the config file, the endpoint's
 * host name (region and service of an AWS host), or the built-in default.
 */
export type SettingSource = "flag" | "env" | "file" | "endpoint" | "default";

/** One resolved setting; `origin` names the flag, variable or file it came from. */
export interface Setting<T> {
  value: T;
  source: SettingSource;
  origin: string;
}

/** Every connection setting of one CLI run. */
export interface CliSettings {
  endpoint: Setting<string>;
  auth: Setting<AuthMode>;
  /** Signing region; undefined when nothing names one. */
  region?: Setting<string>;
  /** SigV4 service (used with auth iam). */
  service: Setting<SigningService>;
  /** AWS profile; undefined: the default chain's own choice. */
  profile?: Setting<string>;
  /** Bearer token (SHOAL_TOKEN): never printed. */
  token?: string;
  /** The config file: its path, content (when present), and whether its settings applied. */
  file: { path: string; config?: ConfigFile; applies: boolean };
}

/**
 * The API's base URL from an endpoint as given: without trailing slashes and without a last
 * `/v1` segment, which every request path already starts with. The console's header shows the
 * API as `http://host:8080/v1`, and an endpoint pasted from it asked for `/v1/v1/…`. Another
 * path prefix (a proxy's `/shoal`, an API Gateway stage) is kept: `http://host/shoal/v1` →
 * `http://host/shoal`. A value that is not an http(s) URL is returned as given, for the
 * endpoint check (main.ts) to refuse with its origin.
 */
export function apiBase(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, "");
  return /^https?:\/\/[^/?#]+(?:\/[^?#]*)?\/v1$/i.test(trimmed) ? trimmed.slice(0, -3) : trimmed;
}

/**
 * Resolves each setting, highest first: flag, environment, config file, default.
 * - endpoint: --endpoint, SHOAL_ENDPOINT, file, http://localhost:8080; a final `/v1` is dropped
 *   ({@link apiBase}).
 * - auth: --auth, SHOAL_AUTH, file, else `iam` for an AWS API host ({@link detectAwsHost}) and
 *   `none` otherwise (standalone needs no credentials).
 * - region: --region, then the region in an AWS host name (a signature scoped to another region
 *   is always refused, so an unrelated AWS_REGION must not win over it), AWS_REGION,
 *   AWS_DEFAULT_REGION, file.
 * - service: file, else from the host (`lambda` for function URLs), else `execute-api`.
 * - profile: --profile, AWS_PROFILE, file.
 * The file's auth, region, service and profile apply only when the endpoint is the file's (or
 * the file names none); see the module comment.
 * @throws UsageError for an --auth or SHOAL_AUTH that is not iam, jwt or none.
 */
export function resolveSettings(
  flags: GlobalFlags,
  env: Env,
  file: { path: string; config?: ConfigFile },
): CliSettings {
  const cfg = file.config ?? {};
  const fileSetting = <T>(value: T): Setting<T> => ({ value, source: "file", origin: file.path });

  let endpoint: Setting<string>;
  if (flags.endpoint !== undefined) {
    endpoint = { value: apiBase(flags.endpoint), source: "flag", origin: "--endpoint" };
  } else if (env.SHOAL_ENDPOINT) {
    endpoint = { value: apiBase(env.SHOAL_ENDPOINT), source: "env", origin: "SHOAL_ENDPOINT" };
  } else if (cfg.endpoint) {
    endpoint = fileSetting(apiBase(cfg.endpoint));
  } else {
    endpoint = { value: DEFAULT_ENDPOINT, source: "default", origin: "default" };
  }
  const applies =
    cfg.endpoint === undefined ||
    endpoint.source === "file" ||
    sameEndpoint(endpoint.value, cfg.endpoint);
  const own: ConfigFile = applies ? cfg : {};
  const host = detectAwsHost(endpoint.value);

  let auth: Setting<AuthMode>;
  if (flags.auth !== undefined) {
    auth = { value: parseAuth(flags.auth, "--auth", UsageError), source: "flag", origin: "--auth" };
  } else if (env.SHOAL_AUTH) {
    auth = {
      value: parseAuth(env.SHOAL_AUTH, "SHOAL_AUTH", UsageError),
      source: "env",
      origin: "SHOAL_AUTH",
    };
  } else if (own.auth) {
    auth = fileSetting(own.auth);
  } else {
    auth = { value: host ? "iam" : "none", source: "default", origin: "default" };
  }

  let region: Setting<string> | undefined;
  if (flags.region) region = { value: flags.region, source: "flag", origin: "--region" };
  else if (host) region = { value: host.region, source: "endpoint", origin: "endpoint host" };
  else if (env.AWS_REGION) region = { value: env.AWS_REGION, source: "env", origin: "AWS_REGION" };
  else if (env.AWS_DEFAULT_REGION) {
    region = { value: env.AWS_DEFAULT_REGION, source: "env", origin: "AWS_DEFAULT_REGION" };
  } else if (own.region) region = fileSetting(own.region);

  let service: Setting<SigningService>;
  if (own.service) service = fileSetting(own.service);
  else if (host) service = { value: host.service, source: "endpoint", origin: "endpoint host" };
  else service = { value: "execute-api", source: "default", origin: "default" };

  let profile: Setting<string> | undefined;
  if (flags.profile) profile = { value: flags.profile, source: "flag", origin: "--profile" };
  else if (env.AWS_PROFILE)
    profile = { value: env.AWS_PROFILE, source: "env", origin: "AWS_PROFILE" };
  else if (own.profile) profile = fileSetting(own.profile);

  return {
    endpoint,
    auth,
    ...(region ? { region } : {}),
    service,
    ...(profile ? { profile } : {}),
    ...(env.SHOAL_TOKEN ? { token: env.SHOAL_TOKEN } : {}),
    file: { path: file.path, ...(file.config ? { config: file.config } : {}), applies },
  };
}

/**
 * Same endpoint up to trailing slashes, a last `/v1` ({@link apiBase}) and the URL's own
 * normalisation (case of the host).
 */
function sameEndpoint(a: string, b: string): boolean {
  const norm = (s: string) => {
    try {
      return apiBase(new URL(s).href);
    } catch {
      return apiBase(s);
    }
  };
  return norm(a) === norm(b);
}

/**
 * Which requests Shoal's unauthenticated loopback servers answer: standalone's API and console,
 * its AWS-protocol endpoints (the embedded backend's, dynalite and fauxqs), and `shoal console`'s
 * proxy. They listen on 127.0.0.1, but a web page can still reach them from the browser of the
 * person running them:
 *
 * - DNS rebinding: a page of `attacker.example`, whose name then resolves to 127.0.0.1, sends
 *   same-origin requests to the local port with `Host: attacker.example:PORT`. So a request is
 *   answered only when its Host names this machine's loopback (`localhost`, `127.0.0.1`, `[::1]`)
 *   on the port it arrived on, or a name the user allowed (any port), as webpack-dev-server's and
 *   Vite's allowed hosts do.
 * - Cross-origin writes (CSRF): a page of another origin posts to `http://localhost:PORT`. So a
 *   state-changing request (any method but GET, HEAD and OPTIONS) that carries an `Origin` is
 *   answered only when that Origin's host[:port] is an allowed one, whatever its scheme (a TLS
 *   proxy in front keeps working). Requests without an Origin (the CLI, curl, the SDKs, Shoal's
 *   own workers and sweepers) are not browsers' cross-origin requests and pass.
 *
 * Names are compared as the WHATWG URL parser normalises a host (lower case, IPv6 compressed
 * and bracketed, IDNA to punycode, `127.1` = `127.0.0.1`), with one trailing dot removed
 * (`localhost.` is `localhost`). A Host without a port means port 80, an Origin without one its
 * scheme's default (80, 443). Pure: a function of the headers, the method and the policy.
 */
import { isRead } from "./admission.js";

/** The loopback names every server admits, with its own port. */
export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/** The environment variable of `shoal standalone`'s further allowed names (comma-separated). */
export const ALLOWED_HOSTS_ENV = "SHOAL_ALLOWED_HOSTS";

/** What a server admits. */
export interface HostPolicy {
  /** Who answers, as refusals name it ("standalone", "shoal console"). */
  server: string;
  /** Names admitted on any port besides the loopback ones, each as {@link normalizeHostName} returns it. */
  allowedHosts: readonly string[];
  /** Check the Origin of reads too (`shoal console`'s proxy, which signs whatever it forwards). */
  originOnReads?: boolean;
  /** How to admit a refused name (appended to the refusal); absent: nothing is suggested. */
  advice?: (name: string) => string;
}

/** The parts of a request the check reads. */
export interface RequestFacts {
  /** The Host header (absent: refused). */
  host: string | undefined;
  /** The Origin header (absent: not a browser's cross-origin request). */
  origin: string | undefined;
  /** The method (absent: GET, as Node's default). */
  method: string | undefined;
  /** The port the request arrived on: the server's own. */
  port: number;
}

/** `shoal standalone`'s policy: loopback plus `allowedHosts`; a refusal names `--allowed-host`. */
export function standalonePolicy(allowedHosts: readonly string[]): HostPolicy {
  return {
    server: "standalone",
    allowedHosts,
    advice: (name) =>
      `to serve it under this name, start standalone with --allowed-host ${name} (or ${ALLOWED_HOSTS_ENV}=${name})`,
  };
}

/**
 * Why the request is refused (one sentence for a 403), or undefined when it is answered: its
 * Host must be an allowed authority, and the Origin of a state-changing request (of any request
 * with {@link HostPolicy.originOnReads}) too.
 */
export function hostRefusal(req: RequestFacts, policy: HostPolicy): string | undefined {
  const names = `localhost, 127.0.0.1 or [::1] on port ${req.port}${policy.allowedHosts.length ? `, or ${policy.allowedHosts.join(", ")}` : ""}`;
  // A loopback name on another port needs no new name: it is refused for its port.
  const advise = (a: Authority | undefined) =>
    a && policy.advice && !LOOPBACK_HOSTS.includes(a.name) ? `; ${policy.advice(a.name)}` : "";
  if (req.host === undefined || req.host === "") {
    return `a request without a Host header is refused: ${policy.server} answers only requests addressed to ${names}`;
  }
  const host = authorityOf(req.host);
  if (!host || !admits(host, req.port, policy)) {
    return `Host '${clip(req.host)}' is refused: ${policy.server} answers only requests addressed to ${names}, so that no web page reaches it through DNS rebinding${advise(host)}`;
  }
  if (req.origin === undefined || (isRead(req.method) && !policy.originOnReads)) return undefined;
  const origin = originOf(req.origin);
  if (!origin || !admits(origin, req.port, policy)) {
    const what = policy.originOnReads ? "send requests" : "change anything";
    return `Origin '${clip(req.origin)}' is refused: only pages of ${names} may ${what} on ${policy.server}${advise(origin)}`;
  }
  return undefined;
}

/**
 * A host name as the check compares it: lower case, IDNA as punycode, IPv6 bracketed (`::1` is
 * `[::1]`), one trailing dot removed.
 * @throws RangeError naming the rule when `name` is not a bare host name (empty, a port, a
 *   scheme, a path, a wildcard, a character no host has).
 */
export function normalizeHostName(name: string): string {
  const trimmed = name.trim();
  const bare = /^[^[\]]*:.*:/.test(trimmed) ? `[${trimmed}]` : trimmed;
  if (bare === "") throw new RangeError("a host name must not be empty");
  if (bare.includes("*")) throw new RangeError(`'${name}': wildcards are not supported`);
  if (/[/?#@\\]/.test(bare) || /^[a-z][a-z0-9+.-]*:\/\//i.test(bare)) {
    throw new RangeError(`'${name}': a host name is expected, not a URL`);
  }
  const parsed = authorityOf(bare);
  if (!parsed) throw new RangeError(`'${name}' is not a valid host name`);
  if (parsed.explicitPort) throw new RangeError(`'${name}': a host name without a port`);
  return parsed.name;
}

/**
 * The names of a comma-separated list (SHOAL_ALLOWED_HOSTS), normalised; blanks between commas
 * are ignored.
 * @throws RangeError naming `source` and the name when one is not a host name.
 */
export function parseAllowedHosts(value: string | undefined, source: string): string[] {
  return (value ?? "")
    .split(",")
    .filter((part) => part.trim() !== "")
    .map((part) => normalizedFrom(source, part));
}

/**
 * `shoal standalone`'s allowed names: those of `--allowed-host` and of SHOAL_ALLOWED_HOSTS,
 * together, normalised, each once.
 * @throws RangeError naming the flag or the variable when a name is not a host name.
 */
export function standaloneAllowedHosts(
  flags: readonly string[] | undefined,
  env: Record<string, string | undefined>,
): string[] {
  const names = (flags ?? []).map((f) => normalizedFrom("--allowed-host", f));
  return [...new Set([...names, ...parseAllowedHosts(env[ALLOWED_HOSTS_ENV], ALLOWED_HOSTS_ENV)])];
}

/** {@link normalizeHostName}, its error prefixed with where the name came from. */
function normalizedFrom(source: string, name: string): string {
  try {
    return normalizeHostName(name);
  } catch (e) {
    throw new RangeError(`${source}: ${(e as Error).message}`);
  }
}

interface Authority {
  name: string;
  port: number | undefined;
  /** The port was written out (a Host or name `x:80` says so even where the URL drops it). */
  explicitPort: boolean;
}

const DEFAULT_PORTS: Record<string, number> = {
  "http:": 80,
  "https:": 443,
  "ws:": 80,
  "wss:": 443,
};

/** A Host header's name and port (80 when none is written), or undefined when it is not one. */
function authorityOf(value: string): Authority | undefined {
  if (/[/?#@\\\s]/.test(value)) return undefined;
  const url = parse(`http://${value}`);
  if (!url) return undefined;
  return {
    name: withoutDot(url.hostname),
    port: url.port === "" ? 80 : Number(url.port),
    explicitPort: /:\d*$/.test(value) && !value.endsWith("]"),
  };
}

/** An Origin's name and port (its scheme's default when none is written), or undefined (`null`, garbage). */
function originOf(value: string): Authority | undefined {
  const url = parse(value);
  if (!url || url.hostname === "" || url.username || url.password) return undefined;
  return { name: withoutDot(url.hostname), port: portOf(url), explicitPort: url.port !== "" };
}

/** One trailing dot removed: `localhost.` is the fully qualified `localhost`. */
function withoutDot(name: string): string {
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/** A URL's port, else its scheme's default (none for a scheme without one). */
function portOf(url: URL): number | undefined {
  return url.port === "" ? DEFAULT_PORTS[url.protocol] : Number(url.port);
}

function admits(a: Authority, port: number, policy: HostPolicy): boolean {
  if (policy.allowedHosts.includes(a.name)) return true;
  return LOOPBACK_HOSTS.includes(a.name) && a.port === port;
}

function parse(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** A header as a message quotes it: at most 100 characters. */
function clip(value: string): string {
  return value.length > 100 ? `${value.slice(0, 100)}…` : value;
}

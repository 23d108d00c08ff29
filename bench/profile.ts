/**
 * CPU profile of a run window (V8 sampling profiler through node:inspector, this process only)
 * and a summary of where the main thread's time went, by package. Everything standalone does
 * runs on this one thread: the engine, the AWS SDK clients, the HTTP servers of dynalite and
 * fauxqs, their storage (LevelDB calls, SQLite), and spawning task processes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export class Profiler {
  private session: Session | undefined;

  async start(): Promise<void> {
    this.session = new Session();
    this.session.connect();
    await this.session.post("Profiler.enable");
    await this.session.post("Profiler.setSamplingInterval", { interval: 500 });
    await this.session.post("Profiler.start");
  }

  async stop(): Promise<CpuProfile | undefined> {
    if (!this.session) return undefined;
    const { profile } = (await this.session.post("Profiler.stop")) as unknown as {
      profile: CpuProfile;
    };
    await this.session.post("Profiler.disable");
    this.session.disconnect();
    this.session = undefined;
    return profile;
  }
}

/** Runtime dependency closure of a package (installed flat in node_modules), minus `skip`. */
function closure(root: string, skip: (pkg: string) => boolean): Set<string> {
  const out = new Set<string>();
  const todo = [root];
  while (todo.length > 0) {
    const pkg = todo.pop() as string;
    if (out.has(pkg) || skip(pkg)) continue;
    out.add(pkg);
    try {
      const json = JSON.parse(readFileSync(join("node_modules", pkg, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>;
      };
      todo.push(...Object.keys(json.dependencies ?? {}));
    } catch {}
  }
  return out;
}

const isSdk = (pkg: string) =>
  pkg.startsWith("@aws-sdk/") || pkg.startsWith("@smithy/") || pkg.startsWith("@aws-crypto/");
const FAUXQS = closure("fauxqs", isSdk);
const DYNALITE = closure("dynalite", () => false);

/** Package (or runtime part) a frame belongs to; undefined for frames without a home. */
function owner(url: string, functionName: string): string | undefined {
  if (!url) {
    if (functionName === "(garbage collector)") return "gc";
    if (functionName === "(idle)") return "idle";
    if (functionName === "(program)") return "program (native, unattributed)";
    return undefined;
  }
  if (url.includes("/fauxqs/dist/persistence.js")) return "fauxqs SQLite persistence";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "/node_modules/".length).split("/");
    const pkg = rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? "?");
    if (/level/.test(pkg) && DYNALITE.has(pkg)) return "dynalite storage (LevelDB)";
    if (DYNALITE.has(pkg)) return "dynalite";
    if (FAUXQS.has(pkg)) return "fauxqs (fastify, SQLite)";
    if (isSdk(pkg) || ["fast-xml-parser", "strnum", "tslib", "bowser"].includes(pkg))
      return "AWS SDK (clients)";
    if (pkg === "tsx" || pkg === "esbuild" || pkg === "get-tsconfig") return "tsx loader";
    return `node_modules/${pkg}`;
  }
  if (url.includes("/bench/")) return "bench harness";
  if (url.includes("/lib/")) return "shoal engine (lib/)";
  if (url.startsWith("node:")) return internalArea(url);
  return undefined;
}

/** Node-internal area of a frame, for time no package frame above it claims. */
function internalArea(url: string): string {
  const m = /^node:(?:internal\/)?([a-z_]+)/.exec(url);
  const mod = m?.[1] ?? "other";
  if (/child_process/.test(mod)) return "node child_process (spawn)";
  if (/http|net|stream|streams|dns|tls|url/.test(mod)) return "node http/net (client+server)";
  if (/fs/.test(mod)) return "node fs";
  if (/timers|process|async_hooks|event/.test(mod)) return "node timers/event loop";
  return `node ${mod}`;
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by the package or node module of the frame (native frames: of their caller). */
  byOwner: Array<{ owner: string; ms: number; pct: number }>;
  /** Self time of the busiest functions. */
  topFunctions: Array<{ fn: string; ms: number; pct: number }>;
}

export function summarizeProfile(p: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ownerCache = new Map<number, string>();
  const ownerOf = (id: number): string => {
    const cached = ownerCache.get(id);
    if (cached) return cached;
    let cur: number | undefined = id;
    let result: string | undefined;
    // Native frames (no URL) belong to their nearest caller that has one.
    while (cur !== undefined) {
      const node = byId.get(cur);
      if (!node) break;
      const o = owner(node.callFrame.url, node.callFrame.functionName);
      if (o) {
        result = o;
        break;
      }
      cur = parent.get(cur);
    }
    result ??= "other";
    ownerCache.set(id, result);
    return result;
  };
  const selfMs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i] as number;
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    selfMs.set(id, (selfMs.get(id) ?? 0) + dt);
  }
  const totalMs = (p.endTime - p.startTime) / 1000;
  const owners = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, t] of selfMs) {
    const o = ownerOf(id);
    owners.set(o, (owners.get(o) ?? 0) + t);
    const cf = byId.get(id)?.callFrame;
    if (cf && cf.functionName !== "(idle)") {
      const file = cf.url
        .replace(/^.*\/node_modules\//, "")
        .replace(/^file:\/\/.*\/(lib|bench)\//, "$1/");
      const key = `${cf.functionName || "(anonymous)"} ${file}:${cf.lineNumber + 1}`;
      fns.set(key, (fns.get(key) ?? 0) + t);
    }
  }
  const pct = (x: number) => Math.round((x / totalMs) * 1000) / 10;
  return {
    totalMs: Math.round(totalMs),
    byOwner: [...owners]
      .sort((a, b) => b[1] - a[1])
      .map(([o, t]) => ({ owner: o, ms: Math.round(t), pct: pct(t) })),
    topFunctions: [...fns]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, t]) => ({ fn, ms: Math.round(t), pct: pct(t) })),
  };
}

export function saveProfile(p: CpuProfile, file: string): void {
  writeFileSync(file, JSON.stringify(p));
}

/**
 * The real Shoal processes a chaos scenario runs, and the kills: `shoal standalone`, `shoal
 * worker` and `shoal sweeper` started from bin/shoal.js, each the leader of its own process
 * group (`detached`), so that `kill -9` of the group takes its children (emulators, the built-in
 * worker) with it. Every process started is tracked: {@link killAll} ends them all, and
 * {@link sweepOrphans} finds anything left under the run's directory through /proc.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, openSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/** The repository (the working directory of every process started). */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(REPO, "bin/shoal.js");

const tracked = new Set<ChildProcess>();

/** A process started by the harness. */
export interface Proc {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  /** Its stdout and stderr, appended. */
  readonly logFile: string;
  /** True until it exited. */
  alive(): boolean;
  /** Resolves when it exited. */
  readonly exited: Promise<void>;
  /** SIGKILL of its whole process group; resolves once it exited. */
  kill9(): Promise<void>;
  /** SIGTERM (SIGINT for standalone), then SIGKILL after `graceMs`; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
}

let counter = 0;

/** Starts `node bin/shoal.js <args>` in its own process group, output to `<logDir>/<name>-<n>.log`. */
export function startShoal(
  name: string,
  args: string[],
  logDir: string,
  env: Record<string, string> = {},
): Proc {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}-${++counter}.log`);
  const fd = openSync(logFile, "a");
  const proc = spawn(process.execPath, [BIN, ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ["ignore", fd, fd],
    detached: true,
  });
  tracked.add(proc);
  const pid = proc.pid ?? -1;
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  void exited.then(() => tracked.delete(proc));
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  return {
    name,
    proc,
    pid,
    logFile,
    alive,
    exited,
    async kill9() {
      signalGroup("SIGKILL");
      await exited;
    },
    async stop(graceMs = 10_000) {
      if (!alive()) return;
      proc.kill(args[0] === "standalone" ? "SIGINT" : "SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A running standalone: its process and its API. */
export interface Standalone extends Proc {
  readonly url: string;
}

/** Options of {@link startStandalone}. */
export interface StandaloneOptions {
  dataDir: string;
  /** A fixed port keeps the API's URL across restarts. */
  port: number;
  workers: number;
  /** More arguments (`--no-scheduler`). */
  args?: string[];
  env?: Record<string, string>;
  /** How long to wait for `API  http://…`, ms (default 60 s). */
  timeoutMs?: number;
  /** Where its output goes (default `<dataDir>/chaos-logs`). */
  logDir?: string;
}

/**
 * Starts `shoal standalone` and waits until it printed its API line.
 * @throws Error with the end of its output when it exits or does not come up in time.
 */
export async function startStandalone(o: StandaloneOptions): Promise<Standalone> {
  const args = ["standalone", "--port", String(o.port), "--data-dir", o.dataDir];
  args.push("--workers", String(o.workers), "--no-examples", ...(o.args ?? []));
  // Its log lines (children's restarts, poller errors) go to its log file: evidence for a failure.
  const p = startShoal("standalone", args, o.logDir ?? join(o.dataDir, "chaos-logs"), {
    SHOAL_QUIET: "false",
    ...o.env,
  });
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  for (;;) {
    const out = readFileSync(p.logFile, "utf8");
    const url = /API\s+(http:\/\/\S+)/.exec(out)?.[1];
    if (url) return { ...p, url };
    if (!p.alive() || Date.now() > deadline) {
      await p.kill9();
      throw new Error(`standalone did not start: ${out.slice(-2000)}`);
    }
    await sleep(100);
  }
}

/** Starts `shoal worker` (or `shoal sweeper`) joining the standalone of `dataDir`. */
export function startJoiner(
  verb: "worker" | "sweeper",
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Proc {
  return startShoal(verb, [verb, "--data-dir", dataDir, ...args], join(dataDir, "chaos-logs"), env);
}

/** A free loopback port (bound and released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

/** A process seen in /proc: pid, parent, command line (arguments joined by spaces). */
export interface ProcInfo {
  pid: number;
  ppid: number;
  cmdline: string;
}

/** Every process of /proc (Linux) that can be read. */
export function listProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 (ppid) follows the command name in parentheses, which may hold spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      out.push({ pid: Number(entry), ppid, cmdline });
    } catch {
      // Gone while we looked.
    }
  }
  return out;
}

/** The live descendants of `pid` (children, their children, …). */
export function descendants(pid: number, all: ProcInfo[] = listProcesses()): ProcInfo[] {
  const out: ProcInfo[] = [];
  const parents = new Set([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        out.push(p);
        grew = true;
      }
    }
  }
  return out;
}

/** The environment of a process, or `{}` when it cannot be read. */
export function environOf(pid: number): Record<string, string> {
  try {
    const raw = readFileSync(`/proc/${pid}/environ`, "utf8");
    return Object.fromEntries(
      raw
        .split("\0")
        .filter((kv) => kv.includes("="))
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    );
  } catch {
    return {};
  }
}

/** A task attempt running under a process (read from its task processes' environment). */
export interface HeldTask {
  instanceId: string;
  code: string;
  attempt: number;
}

/** The task attempts running under process `pid` (its descendants with SHOAL_INSTANCE_ID). */
export function heldTasks(pid: number): HeldTask[] {
  const seen = new Map<string, HeldTask>();
  for (const p of descendants(pid)) {
    const env = environOf(p.pid);
    if (!env.SHOAL_INSTANCE_ID || !env.SHOAL_TASK_CODE) continue;
    const t = {
      instanceId: env.SHOAL_INSTANCE_ID,
      code: env.SHOAL_TASK_CODE,
      attempt: Number(env.SHOAL_ATTEMPT ?? 0),
    };
    seen.set(`${t.instanceId} ${t.code} ${t.attempt}`, t);
  }
  return [...seen.values()];
}

/** The child of `pid` whose command line matches `pattern`, if one is alive. */
export function childMatching(pid: number, pattern: RegExp): ProcInfo | undefined {
  return listProcesses().find((p) => p.ppid === pid && pattern.test(p.cmdline));
}

/** SIGKILL of every process group the harness started; resolves once each exited. */
export async function killAll(): Promise<void> {
  const procs = [...tracked];
  for (const p of procs) {
    try {
      if (p.pid) process.kill(-p.pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  await Promise.all(
    procs.map((p) =>
      p.exitCode !== null || p.signalCode !== null
        ? undefined
        : new Promise<void>((r) => p.once("exit", () => r())),
    ),
  );
}

/** SIGKILL of every process group the harness started, without waiting (exit handlers). */
export function killAllNow(): void {
  for (const p of tracked) {
    try {
      if (p.pid) process.kill(-p.pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

/**
 * Kills (SIGKILL) every process other than this one whose command line or environment names
 * `root` (the run's directory: data dirs, endpoints.env, side-effect files), and returns what it
 * killed: after the scenario's own teardown, anything found here is an orphan.
 */
export function sweepOrphans(root: string): ProcInfo[] {
  const found = listProcesses().filter((p) => {
    if (p.pid === process.pid) return false;
    if (p.cmdline.includes(root)) return true;
    return Object.values(environOf(p.pid)).some((v) => v.includes(root));
  });
  for (const p of found) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  return found;
}

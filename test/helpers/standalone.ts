/**
 * Starts `shoal standalone` as a real child process (the CLI a user runs) and talks to it over
 * HTTP. `kill9` is a real SIGKILL, for crash tests.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { until } from "./poll.js";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
const BIN = fileURLToPath(new URL("../../bin/shoal.js", import.meta.url));

export interface RunningStandalone {
  url: string;
  proc: ChildProcess;
  output: () => string;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

export async function startStandaloneProcess(opts: {
  dataDir: string;
  workers?: number;
  examples?: boolean;
  env?: Record<string, string>;
  /** More command-line arguments (e.g. `--no-scheduler`). */
  args?: string[];
  /** The working directory (default: the repository). */
  cwd?: string;
  /** The `shoal` bin to start (default: the repository's bin/shoal.js). */
  bin?: string;
}): Promise<RunningStandalone> {
  const args = [
    opts.bin ?? BIN,
    "standalone",
    "--port",
    "0",
    "--data-dir",
    opts.dataDir,
    "--workers",
    String(opts.workers ?? 4),
  ];
  if (!opts.examples) args.push("--no-examples");
  args.push(...(opts.args ?? []));
  const proc = spawn(process.execPath, args, {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, SHOAL_QUIET: "true", ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout?.on("data", (d) => {
    out += d;
  });
  proc.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  // An exit before the banner fails at once, with what it printed.
  const url = await until(() => /API\s+(http:\/\/\S+)/.exec(out)?.[1] ?? exitOf(proc), {
    timeoutMs: 30_000,
    what: () => `standalone to start (output so far: ${out})`,
  });
  if (!url.startsWith("http")) {
    throw new Error(`standalone ${url} before it started; its output: ${out}`);
  }
  return {
    url,
    proc,
    output: () => out,
    async kill9() {
      proc.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGINT");
        await exited;
      }
    },
  };
}

/** `exited (code)` or `killed (signal)` once the process is gone; undefined while it runs. */
function exitOf(proc: ChildProcess): string | undefined {
  if (proc.exitCode !== null) return `exited (${proc.exitCode})`;
  if (proc.signalCode !== null) return `killed (${proc.signalCode})`;
  return undefined;
}

/** JSON request against the API. */
// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
export async function api<T = any>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Runs the CLI to completion (asynchronously: the test's own timers keep running). */
export function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO,
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.once("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** PUT a workflow definition; throws with the answer unless it was created or changed. */
export async function putWorkflow(base: string, name: string, def: unknown): Promise<void> {
  const r = await api(base, "PUT", `/v1/workflows/${name}`, def);
  if (r.status >= 300) throw new Error(`PUT ${name}: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Starts a run (POST …/runs) and returns the instance id; throws unless the answer is 202. */
export async function startRun(base: string, name: string, body: unknown = {}): Promise<string> {
  const r = await api(base, "POST", `/v1/workflows/${name}/runs`, body);
  if (r.status !== 202) throw new Error(`run ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.instanceId as string;
}

/** Waits for an instance to reach a final state. */
// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
export async function waitFinal(base: string, id: string, timeoutMs = 120_000): Promise<any> {
  return until(
    async () => {
      const r = await api(base, "GET", `/v1/instances/${id}`);
      return ["SUCCESS", "FAILURE", "STOPPED"].includes(r.body?.state) ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 200, what: `instance ${id} to finish` },
  );
}

/** A `shoal worker` process joining a standalone through its endpoints.env. */
export interface RunningWorker {
  proc: ChildProcess;
  /** Resolves once the worker announced itself. */
  ready(): Promise<unknown>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function startWorkerProcess(dataDir: string, args: string[] = []): RunningWorker {
  return startProcess("worker", dataDir, args);
}

/** A `shoal sweeper` process joining a standalone through its endpoints.env. */
export function startSweeperProcess(dataDir: string, args: string[] = []): RunningWorker {
  return startProcess("sweeper", dataDir, args);
}

function startProcess(verb: "worker" | "sweeper", dataDir: string, args: string[]): RunningWorker {
  const proc = spawn(process.execPath, [BIN, verb, ...args], {
    cwd: REPO,
    env: { ...process.env, SHOAL_ENV_FILE: `${dataDir}/endpoints.env`, SHOAL_QUIET: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout?.on("data", (d) => {
    out += d;
  });
  proc.stderr?.resume();
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  return {
    proc,
    ready: () => until(() => out.includes(`shoal ${verb}`), { what: `a ${verb} to start` }),
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}

/** A task instance as the API shows it (the fields the end-to-end tests read). */
export interface E2eTask {
  code: string;
  state: string;
  attempt: number;
  error?: string;
  exitCode?: number;
  warning?: string;
  startedAt?: string;
  endedAt?: string;
  outputs?: Record<string, string>;
  branch?: string[];
  subInstanceId?: string;
  /** `host:pid:id` of the worker that ran the attempt. */
  worker?: string;
}

/** An instance's tasks by code. */
export function byCode(inst: { tasks: E2eTask[] }): Record<string, E2eTask> {
  return Object.fromEntries(inst.tasks.map((t) => [t.code, t]));
}

/** A child process of a process: its pid and command line (arguments joined by spaces). */
export interface ChildProc {
  pid: number;
  cmdline: string;
}

/**
 * The live children of process `pid`, read from /proc (Linux): how the crash tests find
 * standalone's emulator and worker children (`emulator-main.ts … dynamodb|sqs`, `worker-main.ts`).
 */
export function childProcesses(pid: number): ChildProc[] {
  const out: ChildProc[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 (ppid) follows the command name in parentheses, which may hold spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== pid) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      out.push({ pid: Number(entry), cmdline });
    } catch {
      // Gone while we looked.
    }
  }
  return out;
}

/** The pid of the child of `pid` whose command line matches `pattern`, once it exists. */
export function childPid(pid: number, pattern: RegExp, what: string): Promise<number> {
  return until(() => childProcesses(pid).find((c) => pattern.test(c.cmdline))?.pid, {
    timeoutMs: 30_000,
    what,
  });
}

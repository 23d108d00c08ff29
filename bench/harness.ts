/**
 * Starts `shoal standalone` in this process on a fresh temporary data directory and instruments
 * it from the outside (no engine code changes):
 * - every AWS SDK request is timed and attributed to the component that sent it (dispatcher,
 *   worker, sweeper — by AsyncLocalStorage around their entry points — or the queue pollers,
 *   by queue URL; the rest is the API);
 * - ReceiveMessage calls are classified (long poll / short, with or without messages);
 * - dispatcher batch sizes and sweeper ticks are counted;
 * - CPU time of this process, of its reaped children (the task processes) and the event loop
 *   utilisation are measured over a window.
 * The counts of the runtime's clients (lib/aws/clients.ts `RequestCounter`) stay the reference figure.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { RequestCounter } from "../lib/aws/clients.js";
import { type Standalone, startStandalone } from "../lib/standalone/standalone.js";

/** Epoch milliseconds with sub-millisecond precision (comparable with the engine's Date.now()). */
export const epochNow = (): number => performance.timeOrigin + performance.now();

export interface TraceEntry {
  t0: number;
  t1: number;
  op: string;
  component: Component;
  /** ReceiveMessage returned messages. */
  got: boolean;
}

export type Component =
  | "dispatcher"
  | "worker"
  | "sweeper"
  | "dispatcher-poller"
  | "worker-poller"
  | "api";

type Handler<A, R> = (arg: A) => Promise<R>;

/** Measurements collected while a harness runs; `reset()` starts a new window. */
export class Instrumentation {
  readonly als = new AsyncLocalStorage<Component>();
  /** Latency samples, ms, by `Service.Operation`. */
  latency = new Map<string, number[]>();
  /** Requests by component and `Service.Operation`. */
  byComponent = new Map<string, number>();
  /**
   * ReceiveMessage outcomes by poller: `long+msgs`, `long-expired` (idle), `long-woken-empty`,
   * `short+msgs`, `short-empty`.
   */
  receives = new Map<string, number>();
  /** Messages per dispatcher handler invocation. */
  dispatcherBatches: number[] = [];
  sweeperTicks = 0;
  /** When set, every request and handler invocation is kept with its epoch times (ms). */
  tracing = false;
  trace: TraceEntry[] = [];
  calls: Array<{ component: Component; t0: number; t1: number; n: number }> = [];
  private cpu0 = process.cpuUsage();
  private children0 = childCpuMs();
  private machine0 = machineBusyMs();
  private emulators0 = emulatorCpuMs();
  private elu0 = performance.eventLoopUtilization();
  private t0 = performance.now();

  constructor(
    readonly eventsQueueUrl: string,
    readonly counter: RequestCounter,
  ) {}

  reset(): void {
    this.counter.reset();
    this.latency = new Map();
    this.byComponent = new Map();
    this.receives = new Map();
    this.dispatcherBatches = [];
    this.sweeperTicks = 0;
    this.trace = [];
    this.calls = [];
    this.cpu0 = process.cpuUsage();
    this.children0 = childCpuMs();
    this.machine0 = machineBusyMs();
    this.emulators0 = emulatorCpuMs();
    this.elu0 = performance.eventLoopUtilization();
    this.t0 = performance.now();
  }

  record(
    service: string,
    command: string | undefined,
    input: Record<string, unknown>,
    ms: number,
    output: unknown,
  ): void {
    const op = `${service}.${(command ?? "Unknown").replace(/Command$/, "")}`;
    // A long poll's latency is mostly waiting for a message: keep it apart.
    const latencyKey =
      op === "SQS.ReceiveMessage"
        ? `${op} (${Number(input.WaitTimeSeconds ?? 0) > 0 ? "long poll" : "short"})`
        : op;
    const list = this.latency.get(latencyKey) ?? [];
    this.latency.set(latencyKey, list);
    list.push(ms);
    let component = this.als.getStore();
    if (!component) {
      const url = input.QueueUrl as string | undefined;
      if (
        service === "SQS" &&
        url &&
        (op.endsWith("ReceiveMessage") ||
          op.endsWith("DeleteMessageBatch") ||
          op.endsWith("ChangeMessageVisibility"))
      ) {
        component = url === this.eventsQueueUrl ? "dispatcher-poller" : "worker-poller";
      } else component = "api";
    }
    if (this.tracing) {
      const t1 = epochNow();
      const got = ((output as { Messages?: unknown[] } | undefined)?.Messages?.length ?? 0) > 0;
      this.trace.push({ t0: t1 - ms, t1, op, component, got });
    }
    const key = `${component}|${op}`;
    this.byComponent.set(key, (this.byComponent.get(key) ?? 0) + 1);
    if (op === "SQS.ReceiveMessage") {
      const long = Number(input.WaitTimeSeconds ?? 0) > 0;
      const got = ((output as { Messages?: unknown[] } | undefined)?.Messages?.length ?? 0) > 0;
      // An empty long poll either waited its full time (idle) or was woken early by a message it
      // could not take (a FIFO group still locked by the message being handled).
      const wait = Number(input.WaitTimeSeconds ?? 0) * 1000;
      const empty = ms >= wait - 250 ? "-expired" : "-woken-empty";
      const k = `${component} ${long ? "long" : "short"}${got ? "+msgs" : long ? empty : "-empty"}`;
      this.receives.set(k, (this.receives.get(k) ?? 0) + 1);
    }
  }

  /** CPU and event-loop figures since the last reset. */
  usage(): {
    wallMs: number;
    cpuMainPct: number;
    cpuChildrenPct: number;
    eventLoopUtilization: number;
    /** Busy CPU of the whole machine (all processes), % of one core (max 100 × cores). */
    machineBusyPct: number;
    /** Emulator child processes (standalone runs dynalite and fauxqs in their own processes), % of one core. */
    emulatorsPct: { dynamodb: number; sqs: number } | undefined;
  } {
    const wallMs = performance.now() - this.t0;
    const cpu = process.cpuUsage(this.cpu0);
    const children = childCpuMs() - this.children0;
    const elu = performance.eventLoopUtilization(this.elu0);
    return {
      wallMs,
      cpuMainPct: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
      cpuChildrenPct: (children / wallMs) * 100,
      eventLoopUtilization: elu.utilization,
      machineBusyPct: ((machineBusyMs() - this.machine0) / wallMs) * 100,
      emulatorsPct: (() => {
        const now = emulatorCpuMs();
        if (!now || !this.emulators0) return undefined;
        return {
          dynamodb: ((now.dynamodb - this.emulators0.dynamodb) / wallMs) * 100,
          sqs: ((now.sqs - this.emulators0.sqs) / wallMs) * 100,
        };
      })(),
    };
  }

  counts(): Record<string, number> {
    return Object.fromEntries([...this.counter.counts].sort((a, b) => b[1] - a[1]));
  }
}

/** Child processes of this process: pid → command line (Linux /proc). */
function childProcesses(): Map<number, string> {
  const out = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      out.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" "));
    } catch {}
  }
  return out;
}

/**
 * CPU ms used so far by standalone's emulator child processes (lib/standalone/emulator-main.ts
 * `<dataDir> dynamodb|sqs`), or undefined when the emulators run in this process.
 */
export function emulatorCpuMs(): { dynamodb: number; sqs: number } | undefined {
  let found = false;
  const out = { dynamodb: 0, sqs: 0 };
  for (const [pid, cmd] of childProcesses()) {
    const m = /emulator-main\.ts .* (dynamodb|sqs)\s*$/.exec(cmd);
    if (!m) continue;
    found = true;
    out[m[1] as "dynamodb" | "sqs"] += processCpuMs(pid);
  }
  return found ? out : undefined;
}

/** Busy CPU time of the whole machine (all cores, ms), from /proc/stat (Linux). */
export function machineBusyMs(): number {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (
      (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) *
        1000) /
      100
    );
  } catch {
    return Number.NaN;
  }
}

/**
 * Waits (at most `maxMs`) until the rest of the machine is quiet: other processes used less than
 * `thresholdPct` of one core over a 1 s sample. The machine is shared (builds and tests of other
 * sessions); a benchmark next to them measures them too. @returns their last sampled CPU %.
 */
export async function waitForQuiet(maxMs = 60_000, thresholdPct = 15): Promise<number> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const m0 = machineBusyMs();
    const c0 = process.cpuUsage();
    const k0 = childCpuMs();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 1_000));
    const wall = performance.now() - t0;
    const used = process.cpuUsage(c0);
    const own = (used.user + used.system) / 1000 + (childCpuMs() - k0);
    const others = ((machineBusyMs() - m0 - own) / wall) * 100;
    if (others < thresholdPct || Date.now() > deadline) return Math.round(others);
  }
}

/** CPU time (user+system, ms) of reaped child processes, from /proc/self/stat (Linux). */
export function childCpuMs(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command: state is field 3; cutime and cstime are fields 16 and 17 (1-based).
    const cutime = Number(fields[13]);
    const cstime = Number(fields[14]);
    return ((cutime + cstime) * 1000) / 100; // USER_HZ = 100 on Linux
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user+system, own and reaped children, ms) of another process, from /proc. */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** `shoal worker` processes next to standalone (instead of its built-in worker). */
export class ExternalWorkers {
  private cpu0: number[] = [];

  constructor(readonly children: ChildProcess[]) {}

  private ask(child: ChildProcess, msg: string, key: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`worker ${child.pid} did not answer '${msg}'`)),
        5_000,
      );
      const on = (m: unknown) => {
        if (m && typeof m === "object" && key in m) {
          clearTimeout(timer);
          child.off("message", on);
          resolve(m as Record<string, unknown>);
        }
      };
      child.on("message", on);
      child.send(msg);
    });
  }

  async reset(): Promise<void> {
    await Promise.all(this.children.map((c) => this.ask(c, "reset", "reset")));
    this.cpu0 = this.children.map((c) => processCpuMs(c.pid));
  }

  /** Request counts of all worker processes, and their CPU ms (with their task processes) since reset. */
  async collect(): Promise<{ counts: Record<string, number>; cpuMs: number }> {
    const answers = await Promise.all(this.children.map((c) => this.ask(c, "counts", "counts")));
    const counts: Record<string, number> = {};
    for (const a of answers) {
      for (const [k, v] of Object.entries(a.counts as Record<string, number>))
        counts[k] = (counts[k] ?? 0) + v;
    }
    const cpuMs = this.children.reduce(
      (sum, c, i) => sum + processCpuMs(c.pid) - (this.cpu0[i] ?? 0),
      0,
    );
    return { counts, cpuMs };
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            const t = setTimeout(() => c.kill("SIGKILL"), 5_000);
            c.once("exit", () => {
              clearTimeout(t);
              resolve();
            });
            c.kill("SIGTERM");
          }),
      ),
    );
  }
}

export interface Harness {
  standalone: Standalone;
  apiUrl: string;
  workers: number;
  dataDir: string;
  instr: Instrumentation;
  /** Set when tasks run in separate `shoal worker` processes. */
  external?: ExternalWorkers;
  stop(): Promise<void>;
}

/**
 * Starts standalone with `workers` task slots on a fresh temp dir and instruments it.
 * @param opts.externalProcesses run the slots in that many `shoal worker` processes instead of
 *   standalone's built-in worker (their requests are counted in those processes).
 */
export async function startHarness(
  workers: number,
  opts: { externalProcesses?: number } = {},
): Promise<Harness> {
  // Standalone runs its worker in a child process; the bench does the same with its own
  // `shoal worker` children, whose AWS requests it can count (one process unless told).
  const externalProcesses = opts.externalProcesses ?? 1;
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-bench-"));
  process.env.SHOAL_QUIET = "true";
  const standalone = await startStandalone({
    port: 0,
    dataDir,
    workers: 0,
    examples: false,
    quiet: true,
  });
  const { runtime } = standalone;
  const instr = new Instrumentation(runtime.config.eventsQueueUrl ?? "", runtime.clients.counter);

  // Time every request (initialize step: includes serialisation, HTTP, parsing, retries).
  const timer = (service: string) =>
    ((next: (a: unknown) => Promise<{ output: unknown }>, ctx: { commandName?: string }) =>
      async (args: { input: Record<string, unknown> }) => {
        const t = performance.now();
        let output: unknown;
        try {
          const r = await next(args);
          output = r.output;
          return r;
        } finally {
          instr.record(service, ctx.commandName, args.input, performance.now() - t, output);
        }
      }) as never;
  runtime.clients.dynamo.middlewareStack.add(timer("DynamoDB"), {
    step: "initialize",
    name: "benchTimer",
  });
  runtime.clients.sqs.middlewareStack.add(timer("SQS"), { step: "initialize", name: "benchTimer" });

  // Attribute requests to the component whose handler is running (the pollers call these
  // properties at call time, so wrapping the instances' methods is enough).
  const wrap = <A, R>(
    obj: Record<string, unknown>,
    method: string,
    component: Component,
    onCall?: (a: A) => void,
  ) => {
    const orig = (obj[method] as Handler<A, R>).bind(obj);
    obj[method] = (arg: A) => {
      onCall?.(arg);
      const t0 = epochNow();
      const p = instr.als.run(component, () => orig(arg));
      if (instr.tracing) {
        const n = Array.isArray(arg) ? arg.length : 1;
        void p
          .finally(() => instr.calls.push({ component, t0, t1: epochNow(), n }))
          .catch(() => {});
      }
      return p;
    };
  };
  wrap<readonly unknown[], unknown>(
    runtime.dispatcher as never,
    "handleBatch",
    "dispatcher",
    (records) => instr.dispatcherBatches.push(records.length),
  );
  wrap(runtime.worker as never, "handleBatch", "worker");
  wrap(runtime.sweeper as never, "sweep", "sweeper", () => instr.sweeperTicks++);

  let external: ExternalWorkers | undefined;
  if (externalProcesses) {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      SHOAL_QUIET: "true",
    };
    for (const line of readFileSync(standalone.envFile, "utf8").split("\n")) {
      const eq = line.indexOf("=");
      if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
    }
    const here = dirname(fileURLToPath(import.meta.url));
    const per = Math.ceil(workers / externalProcesses);
    const children = Array.from({ length: externalProcesses }, () =>
      fork(join(here, "worker-child.ts"), [String(per)], {
        env,
        cwd: join(here, ".."), // resolves --import tsx
        execArgv: ["--import", "tsx", "--no-warnings"],
        stdio: ["ignore", "ignore", "inherit", "ipc"],
      }),
    );
    external = new ExternalWorkers(children);
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve, reject) => {
            const t = setTimeout(
              () => reject(new Error("shoal worker process did not start")),
              30_000,
            );
            c.once("message", () => {
              clearTimeout(t);
              resolve();
            });
            c.once("exit", (code) => reject(new Error(`shoal worker process exited with ${code}`)));
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 300)); // its poller's first receives
    await external.reset();
  }

  return {
    standalone,
    apiUrl: standalone.apiUrl,
    workers,
    dataDir,
    instr,
    ...(external ? { external } : {}),
    async stop() {
      await external?.stop();
      await standalone.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

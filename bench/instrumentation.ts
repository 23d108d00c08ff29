/**
 * What the harness measures while a scenario runs: every AWS SDK request timed and attributed to
 * the component that sent it (dispatcher, worker, sweeper — by AsyncLocalStorage around their
 * entry points — or the queue pollers, by queue URL; the rest is the API), ReceiveMessage
 * outcomes, dispatcher batch sizes, sweeper ticks, and CPU and event-loop figures over a window.
 * The counts of the runtime's clients (lib/aws/clients.ts `RequestCounter`) stay the reference figure.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { performance } from "node:perf_hooks";
import type { RequestCounter } from "../lib/aws/clients.js";
import { childCpuMs, emulatorCpuMs, machineBusyMs } from "./proc-cpu.js";

/** Epoch milliseconds with sub-millisecond precision (comparable with the engine's Date.now()). */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/** One AWS request kept while `Instrumentation.tracing` is on: epoch ms, `Service.Operation`, sender. */
export interface TraceEntry {
  t0: number;
  t1: number;
  op: string;
  component: Component;
  /** ReceiveMessage returned messages. */
  got: boolean;
}

/** Who sent a request: an engine component (by AsyncLocalStorage) or a queue poller (by URL); the rest is the API. */
export type Component =
  | "dispatcher"
  | "worker"
  | "sweeper"
  | "dispatcher-poller"
  | "worker-poller"
  | "api";

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

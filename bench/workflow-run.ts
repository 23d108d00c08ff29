/**
 * Runs one workflow on a harness and measures it: request counts (reset right before the POST,
 * read right after the instance is final), component breakdown, CPU, optionally a CPU profile,
 * and the instance's own timestamps from the API.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getInstance, type InstanceView, ms, putWorkflow, startRun, waitForFinal } from "./api.js";
import type { Harness } from "./harness.js";
import { epochNow, type Instrumentation } from "./instrumentation.js";
import { waitForQuiet } from "./proc-cpu.js";
import { Profiler, type ProfileSummary, saveProfile, summarizeProfile } from "./profile.js";
import { round, type Summary, summarize } from "./stats.js";

export interface RequestReport {
  total: number;
  perTask: number;
  dynamodbPerTask: number;
  sqsPerTask: number;
  /** `Service.Operation` → count, highest first. */
  byOperation: Record<string, number>;
  /** `component|Service.Operation` → count. */
  byComponent: Record<string, number>;
  /** ReceiveMessage outcomes by poller. */
  receives: Record<string, number>;
  /** Requests that do not scale with tasks: sweeper ticks, long polls that expired empty (idle), the bench's own status polls. */
  background: { sweeper: number; sweeperTicks: number; emptyLongPolls: number; benchPolls: number };
  /** (total − background) ÷ tasks. */
  enginePerTask: number;
  enginePerTaskDynamodb: number;
  enginePerTaskSqs: number;
}

export interface RunReport {
  instance: InstanceView;
  tasks: number;
  state: string;
  /** Instance createdAt (the API's POST) → instance endedAt, ms (instance timestamps). */
  wallMs: number;
  /** First task startedAt → last task endedAt, ms. */
  spanMs: number;
  /** createdAt → first task startedAt, ms. */
  firstStartMs: number;
  /** Last task endedAt → instance endedAt, ms. */
  finishLagMs: number;
  requests: RequestReport;
  latencyByOperation: Record<string, Summary & { totalMs: number }>;
  dispatcher: { batches: number; messages: number; meanBatch: number; maxBatch: number };
  cpu: {
    wallMs: number;
    cpuMainPct: number;
    cpuChildrenPct: number;
    eventLoopUtilization: number;
    /** `shoal worker` processes with their task processes, % of one core. */
    cpuWorkerProcessesPct?: number;
    /** dynalite and fauxqs child processes (when standalone runs them out of process), % of one core. */
    cpuDynamoEmulatorPct?: number;
    cpuSqsEmulatorPct?: number;
    /** CPU used by everything else on the machine meanwhile (other users' builds and tests), % of one core. */
    otherProcessesPct: number;
    /** The same, sampled for 1 s just before the run (after waiting up to 60 s for it to drop below 15 %). */
    otherProcessesBeforePct: number;
  };
  profile?: ProfileSummary & { file: string };
  /** With `trace`: every request and handler call; `offset` = Date.now() − trace clock. */
  trace?: { requests: Instrumentation["trace"]; calls: Instrumentation["calls"]; offset: number };
}

export async function runWorkflow(
  h: Harness,
  name: string,
  definition: unknown,
  opts: { deadlineMs: number; profile?: boolean; pollMs?: number; trace?: boolean },
): Promise<RunReport> {
  await putWorkflow(h.apiUrl, name, definition);
  // Let the PUT's effects and the pollers settle, and wait for a quiet machine (shared).
  const othersBefore = await waitForQuiet();
  const profiler = opts.profile ? new Profiler() : undefined;
  await profiler?.start();
  h.instr.tracing = Boolean(opts.trace);
  await h.external?.reset();
  h.instr.reset();
  const instanceId = await startRun(h.apiUrl, name);
  let final: { state: string; polls: number };
  try {
    final = await waitForFinal(h.apiUrl, name, {
      deadlineMs: opts.deadlineMs,
      intervalMs: opts.pollMs ?? 100,
    });
  } catch (e) {
    await profiler?.stop();
    throw e;
  }
  // Read everything right away, before the final (large) GET adds its own requests.
  const usage = h.instr.usage();
  const ext = await h.external?.collect();
  const merged = new Map(Object.entries(h.instr.counts()));
  const byComponentMap = new Map(h.instr.byComponent);
  for (const [op, n] of Object.entries(ext?.counts ?? {})) {
    merged.set(op, (merged.get(op) ?? 0) + n);
    byComponentMap.set(`worker-process|${op}`, n);
  }
  const counts = Object.fromEntries([...merged].sort((a, b) => b[1] - a[1]));
  const extTotal = (service?: string) =>
    Object.entries(ext?.counts ?? {}).reduce(
      (a, [k, v]) => a + (!service || k.startsWith(`${service}.`) ? v : 0),
      0,
    );
  const total = h.instr.counter.total() + extTotal();
  const dynamo = h.instr.counter.total("DynamoDB") + extTotal("DynamoDB");
  const sqs = h.instr.counter.total("SQS") + extTotal("SQS");
  const byComponent = Object.fromEntries([...byComponentMap].sort((a, b) => b[1] - a[1]));
  const receives = Object.fromEntries([...h.instr.receives].sort());
  const latency = new Map(h.instr.latency);
  const batches = [...h.instr.dispatcherBatches];
  const sweeperTicks = h.instr.sweeperTicks;
  const trace = opts.trace
    ? { requests: h.instr.trace, calls: h.instr.calls, offset: Date.now() - epochNow() }
    : undefined;
  h.instr.tracing = false;
  const raw = await profiler?.stop();

  const instance = await getInstance(h.apiUrl, instanceId);
  const tasks = instance.tasks.length;
  const starts = instance.tasks.map((t) => ms(t.startedAt));
  const ends = instance.tasks.map((t) => ms(t.endedAt));
  const firstStart = Math.min(...starts);
  const lastEnd = Math.max(...ends);

  let sweeper = 0;
  for (const [k, v] of Object.entries(byComponent)) if (k.startsWith("sweeper|")) sweeper += v;
  let emptyLongPolls = 0;
  for (const [k, v] of Object.entries(receives))
    if (k.endsWith("long-expired")) emptyLongPolls += v;
  const background = { sweeper, sweeperTicks, emptyLongPolls, benchPolls: final.polls };
  const bg = sweeper + emptyLongPolls + final.polls;
  // Split background by service: sweeper and bench polls are DynamoDB Queries, long polls SQS.
  const engine = total - bg;
  const engineDynamo = dynamo - sweeper - final.polls;
  const engineSqs = sqs - emptyLongPolls;

  const latencyByOperation: RunReport["latencyByOperation"] = {};
  for (const [op, list] of [...latency].sort((a, b) => b[1].length - a[1].length)) {
    latencyByOperation[op] = {
      ...summarize(list),
      totalMs: Math.round(list.reduce((a, b) => a + b, 0)),
    };
  }

  const report: RunReport = {
    instance,
    tasks,
    state: final.state,
    wallMs: ms(instance.endedAt) - ms(instance.createdAt),
    spanMs: lastEnd - firstStart,
    firstStartMs: firstStart - ms(instance.createdAt),
    finishLagMs: ms(instance.endedAt) - lastEnd,
    requests: {
      total,
      perTask: round(total / tasks, 2),
      dynamodbPerTask: round(dynamo / tasks, 2),
      sqsPerTask: round(sqs / tasks, 2),
      byOperation: counts,
      byComponent,
      receives,
      background,
      enginePerTask: round(engine / tasks, 2),
      enginePerTaskDynamodb: round(engineDynamo / tasks, 2),
      enginePerTaskSqs: round(engineSqs / tasks, 2),
    },
    latencyByOperation,
    dispatcher: {
      batches: batches.length,
      messages: batches.reduce((a, b) => a + b, 0),
      meanBatch: round(batches.reduce((a, b) => a + b, 0) / Math.max(1, batches.length), 2),
      maxBatch: batches.length ? Math.max(...batches) : 0,
    },
    cpu: {
      wallMs: Math.round(usage.wallMs),
      cpuMainPct: round(usage.cpuMainPct, 1),
      cpuChildrenPct: round(usage.cpuChildrenPct, 1),
      eventLoopUtilization: round(usage.eventLoopUtilization, 3),
      ...(ext ? { cpuWorkerProcessesPct: round((ext.cpuMs / usage.wallMs) * 100, 1) } : {}),
      otherProcessesBeforePct: othersBefore,
      ...(usage.emulatorsPct
        ? {
            cpuDynamoEmulatorPct: round(usage.emulatorsPct.dynamodb, 1),
            cpuSqsEmulatorPct: round(usage.emulatorsPct.sqs, 1),
          }
        : {}),
      otherProcessesPct: round(
        usage.machineBusyPct -
          usage.cpuMainPct -
          usage.cpuChildrenPct -
          (usage.emulatorsPct ? usage.emulatorsPct.dynamodb + usage.emulatorsPct.sqs : 0) -
          (ext ? (ext.cpuMs / usage.wallMs) * 100 : 0),
        1,
      ),
    },
  };
  if (trace) Object.defineProperty(report, "trace", { value: trace, enumerable: false });
  if (raw) {
    const file = join(tmpdir(), `shoal-bench-${name}.cpuprofile`);
    saveProfile(raw, file);
    report.profile = { ...summarizeProfile(raw), file };
  }
  return report;
}

/** Per-task "ready → started" delays: startedAt − max(upstream endedAt) (roots: − createdAt). */
export function dispatchDelays(
  instance: InstanceView,
  upstream: ReadonlyMap<string, readonly string[]>,
): number[] {
  const byCode = new Map(instance.tasks.map((t) => [t.code, t]));
  const out: number[] = [];
  for (const t of instance.tasks) {
    const ups = upstream.get(t.code) ?? [];
    const ready = ups.length
      ? Math.max(...ups.map((u) => ms(byCode.get(u)?.endedAt)))
      : ms(instance.createdAt);
    out.push(ms(t.startedAt) - ready);
  }
  return out;
}

/**
 * 6. Schedule firing: N one-time (`at`) schedules of one ONLINE workflow, all due at the same
 * instant T0, fired by S schedule sweepers (lib/engine/schedule-sweeper.ts) in this process, each
 * sweeping every 1 s with a 1 s look-ahead, as `shoal sweeper` does. The emulators run in their
 * own processes, as in standalone; no dispatcher runs, so the START commands and their delayed
 * signals pile up unconsumed (the figure is the sweepers' firing alone).
 *
 * The goal it checks (issue): 100,000 schedules spread over the shards, due in one minute, all
 * fired within 5 s of their nominal time. Figures: creation rate, fires/s, lateness from the fire
 * ledger (actualTime − nominalTime: when the sweeper decided, up to the look-ahead early) and from
 * this process's clock (when the fire record, the signal and the schedule update were written),
 * T0 → last fire, AWS requests per fire, CPU of the bench process and of each emulator process.
 * A run ends when every schedule has its fire record, or when nothing moved for a while and the
 * due index lists nothing more: dynalite loses some index entries of schedules due at one instant
 * (see dynaliteIndexPrefix), and those never fire; the figures say how many.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import pLimit from "p-limit";
import { handleApiEvent } from "../lib/api/router.js";
import { type AwsClients, createAwsClients } from "../lib/aws/clients.js";
import { configFromEnv, ENV } from "../lib/aws/config.js";
import { nextFireTimes } from "../lib/core/schedule-time.js";
import {
  SCHEDULE_SHARDS,
  type ScheduleSweeper,
  shardOf,
  timingOf,
} from "../lib/engine/schedule-sweeper.js";
import { createRuntime, type Runtime } from "../lib/runtime/runtime.js";
import { startEmulatorProcess } from "../lib/standalone/emulator-process.js";
import { httpApiEvent } from "../lib/standalone/lambda-events.js";
import {
  autoCreatedQueues,
  ensureEventsQueue,
  ensureSignalsQueue,
  ensureTables,
  ensureTaskQueues,
} from "../lib/standalone/provision.js";
import type { ScheduleRecord } from "../lib/store/schedules.js";
import { emulatorCpuMs, epochNow, machineBusyMs, waitForQuiet } from "./harness.js";
import { type CpuProfile, Profiler, type ProfileSummary, summarizeProfile } from "./profile.js";
import type { ScenarioOptions, ScenarioResult } from "./scenarios.js";
import { round, type Summary, table } from "./stats.js";

/** What the issue asks for: this many schedules, each fired within GOAL_MS of its time. */
const GOAL_SCHEDULES = 100_000;
const GOAL_MS = 5_000;
/**
 * Schedules by default: 100,000 take ≈ 5 min per sweeper count on 2 cores (creation ≈ 55 s, lead
 * ≈ 35 s, firing ≈ 215 s), so the default run measures 20,000 (≈ 1.5 min per sweeper count) and
 * extrapolates; --schedules=100000 runs the goal itself.
 */
const DEFAULT_SCHEDULES = 20_000;
/** Sweep period and look-ahead, ms (`shoal sweeper`'s and standalone's local values, `LOOKAHEAD_MS`). */
const SWEEP_MS = 1_000;
const LOOKAHEAD_MS = 1_000;
/** Concurrent putSchedule calls while creating (dynalite is one event loop: more only queue). */
const CREATE_CONCURRENCY = 16;
/** T0 = now + expected creation time × this + LEAD_SLACK_MS (the pilot's rate may drift). */
const CREATE_MARGIN = 1.2;
const LEAD_SLACK_MS = 10_000;
/** Nothing written for this long after T0, and nothing listed due: the run is over, ms. */
const STALL_MS = 3_000;
/** Give up on a run this long after T0 (its figures are then partial). */
const FIRE_DEADLINE_MS = 15 * 60_000;
const WORKFLOW = "bench-scheduled";

/** Figures of one run (one sweeper count). */
export interface ScheduleRunFigures {
  schedules: number;
  sweepers: number;
  /** Every schedule has a fire record in the ledger. */
  complete: boolean;
  /** The run ended because nothing moved and nothing was listed due any more. */
  stalled: boolean;
  /**
   * Schedules without a fire record at the end, how many of them share a dynalite index entry
   * with another schedule of their shard (dynaliteIndexPrefix), and how many such losses the
   * birthday bound predicts.
   */
  neverFired: {
    count: number;
    sharingIndexEntry: number;
    expectedSharing: number;
    sample: string[];
  };
  /** Schedules per shard, by shard. */
  perShard: number[];
  creation: { ms: number; perSecond: number; pilot: number; leadMs: number; slackMs: number };
  /** Unique fire records written, and over which span (first → last record written), ms. */
  fired: number;
  firesPerSecond: number;
  /** Fire ledger: actualTime − nominalTime, ms (negative: decided within the look-ahead). */
  ledgerLatenessMs: Summary;
  /** This process's clock: fire record written − nominalTime, ms. */
  writtenLatenessMs: Summary;
  /** Signal sent (SQS accepted it) − nominalTime, ms; the run may start no earlier than nominal. */
  signalLatenessMs: Summary;
  /** Fires whose record was written within GOAL_MS of nominal, %. */
  withinGoalPct: number;
  t0ToLastFireMs: number;
  t0ToLastSignalMs: number;
  t0ToLastUpdateMs: number;
  requests: {
    total: number;
    perFire: number;
    dynamodbPerFire: number;
    sqsPerFire: number;
    byOperationPerFire: Record<string, number>;
  };
  /** Request latency (client side, incl. queueing in the SDK's socket pool), ms, by operation. */
  latencyMs: Record<string, Summary & { totalMs: number }>;
  /** Mean requests under way (Little's law: Σ latency ÷ window). */
  meanInFlight: number;
  cpu: {
    windowMs: number;
    benchPct: number;
    dynalitePct: number;
    fauxqsPct: number;
    othersPct: number;
    othersBeforePct: number;
    eventLoopUtilization: number;
    /** CPU ms per fire of each process. */
    perFireMs: { bench: number; dynalite: number; fauxqs: number };
    /**
     * Fires/s these costs allow: each single-threaded process alone on a core, and all three
     * sharing this machine's cores with nothing else running.
     */
    ceilingFiresPerSecond: { bench: number; dynalite: number; machine: number };
  };
  sweeps: {
    count: number;
    durationMs: Summary;
    /** putFire calls that found the record already there (another sweeper fired it). */
    duplicateFireWrites: number;
    /** getSchedule found the schedule no longer due (already fired; the index lagged). */
    staleReads: number;
    /** Lost conditional schedule updates (another sweeper advanced it first). */
    lostUpdates: number;
    listDueQueries: number;
    /** Sweeps of one shard by two sweepers at overlapping times. */
    overlappingShardSweeps: number;
    errors: Record<string, number>;
  };
  /** Signal messages left on the signals and events queues afterwards (nobody consumes them). */
  signalsQueued: number;
  ledgerChecked: { scanned: number; fired: number; listFiresSample: number; mismatches: number };
  /** --profile: the bench process over the firing window. */
  profile?: ProfileSummary;
  /** --profile: each emulator process over its whole life (creation and firing). */
  emulatorProfiles?: Record<string, ProfileSummary & { file: string }>;
}

/**
 * stats.ts `summarize` for long lists (it spreads them into Math.max, which overflows the call
 * stack near 100,000 values): the same nearest-rank percentiles and rounding.
 */
function summary(values: readonly number[]): Summary {
  const s = Float64Array.from(values).sort();
  const at = (p: number) =>
    s.length
      ? (s[Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length))) - 1] as number)
      : Number.NaN;
  const sum = s.reduce((a, b) => a + b, 0);
  return {
    n: s.length,
    mean: round(s.length ? sum / s.length : Number.NaN, 2),
    p50: round(at(50), 2),
    p90: round(at(90), 2),
    p99: round(at(99), 2),
    max: round(at(100), 2),
  };
}

const sleep = (ms: number) => delay(Math.max(0, ms));

/** The event API Gateway would hand the API handler. */
function apiEvent(method: string, path: string, body: unknown): APIGatewayProxyEventV2 {
  return httpApiEvent({
    method,
    path,
    headers: { "content-type": "application/json", "user-agent": "bench" },
    body: JSON.stringify(body),
    requestId: randomUUID(),
    timeEpoch: Date.now(),
  });
}

/** A schedule as POST /v1/schedules writes it with the API's defaults (lib/api/schedules.ts). */
function scheduleRecord(at: number, now: number): ScheduleRecord {
  const id = randomUUID();
  const rec: ScheduleRecord = {
    id,
    workflow: WORKFLOW,
    at,
    timezone: "UTC",
    params: {},
    misfirePolicy: "FIRE_ONCE",
    misfireThresholdSeconds: 60,
    maxCatchup: 100,
    overlapPolicy: "PARALLEL",
    state: "ONLINE",
    shard: shardOf(id),
    createdAt: now,
    updatedAt: now,
    rev: 1,
  };
  const [next] = nextFireTimes(timingOf(rec), now, 1);
  if (next !== undefined) rec.nextFireTime = next;
  return rec;
}

/** Writes `n` schedules due at `at` with bounded concurrency, adding them to `created`. @returns ms taken. */
async function createSchedules(
  rt: Runtime,
  n: number,
  at: number,
  created: Array<{ id: string; shard: string }>,
  progress?: (done: number) => void,
): Promise<number> {
  const t = performance.now();
  let done = 0;
  await pLimit(CREATE_CONCURRENCY).map(
    Array.from({ length: n }, (_, i) => i),
    async () => {
      const rec = scheduleRecord(at, Date.now());
      if (!(await rt.scheduling.schedules.putSchedule(rec))) throw new Error("schedule id clash");
      created.push({ id: rec.id, shard: rec.shard });
      if (++done % 5_000 === 0) progress?.(done);
    },
  );
  return performance.now() - t;
}

/**
 * dynalite (4.0, db/index.js `createIndexKey`/`hashPrefix`) keys a GSI entry by the index key plus
 * only the first 6 hex digits of an MD5 of the table key: two items with equal index keys whose
 * prefixes collide share one entry, and the first to leave the index deletes it for both. The
 * schedules of one shard all due at T0 have equal `due` keys, so about k²/2²⁵ of k lose theirs and
 * are never listed again (real DynamoDB keeps every entry). @returns that prefix.
 */
function dynaliteIndexPrefix(id: string): string {
  return createHash("md5").update("Outliers").update(id, "utf8").digest("hex").slice(0, 6);
}

/** Schedules without a fire record, and how many of them share a dynalite index entry. */
function neverFired(
  created: ReadonlyArray<{ id: string; shard: string }>,
  fired: ReadonlySet<string>,
): { ids: string[]; sharingIndexEntry: number; expectedSharing: number } {
  const entries = new Map<string, number>();
  const perShard = new Map<string, number>();
  for (const c of created) {
    const k = `${c.shard}:${dynaliteIndexPrefix(c.id)}`;
    entries.set(k, (entries.get(k) ?? 0) + 1);
    perShard.set(c.shard, (perShard.get(c.shard) ?? 0) + 1);
  }
  const ids = created.filter((c) => !fired.has(c.id));
  // Expected items that lose their entry: one per colliding pair, k(k−1)/2 pairs ÷ 16^6 per shard.
  const expected = [...perShard.values()].reduce((a, k) => a + (k * (k - 1)) / 2 / 16 ** 6, 0);
  return {
    ids: ids.map((c) => c.id),
    sharingIndexEntry: ids.filter(
      (c) => (entries.get(`${c.shard}:${dynaliteIndexPrefix(c.id)}`) ?? 0) > 1,
    ).length,
    expectedSharing: round(expected, 1),
  };
}

/** What the sweepers did, seen through wrappers on the stores and queues they call. */
interface FireLog {
  /** Epoch ms at which each new fire record was written, and its ledger actualTime. */
  written: number[];
  actual: number[];
  duplicates: number;
  /** First time each START command's signal was accepted, by command id. */
  signalled: Map<string, number>;
  updated: number[];
  lostUpdates: number;
  listDue: number;
  staleReads: number;
  errors: Map<string, number>;
  /** When a fire record, signal or schedule update was last written (epoch ms). */
  lastProgress: number;
}

function instrumentFires(rt: Runtime): FireLog {
  const log: FireLog = {
    written: [],
    actual: [],
    duplicates: 0,
    signalled: new Map(),
    updated: [],
    lostUpdates: 0,
    listDue: 0,
    staleReads: 0,
    errors: new Map(),
    lastProgress: 0,
  };
  const s = rt.scheduling;
  const { fires, schedules, queues } = s;
  const putFire = fires.putFire.bind(fires);
  fires.putFire = async (f) => {
    const ok = await putFire(f);
    if (ok) {
      log.lastProgress = epochNow();
      log.written.push(log.lastProgress);
      log.actual.push(f.actualTime);
    } else log.duplicates++;
    return ok;
  };
  const getSchedule = schedules.getSchedule.bind(schedules);
  schedules.getSchedule = async (id) => {
    const r = await getSchedule(id);
    if (r?.nextFireTime === undefined) log.staleReads++;
    return r;
  };
  const updateSchedule = schedules.updateSchedule.bind(schedules);
  schedules.updateSchedule = async (rec) => {
    const ok = await updateSchedule(rec);
    if (ok) {
      log.lastProgress = epochNow();
      log.updated.push(log.lastProgress);
    } else log.lostUpdates++;
    return ok;
  };
  const listDue = schedules.listDue.bind(schedules);
  schedules.listDue = (shard, before, limit) => {
    log.listDue++;
    return listDue(shard, before, limit);
  };
  const noteSignal = (id: string) => {
    log.lastProgress = epochNow();
    if (!log.signalled.has(id)) log.signalled.set(id, log.lastProgress);
  };
  const delayed = queues.sendDelayedSignal.bind(queues);
  queues.sendDelayedSignal = async (event, delaySeconds) => {
    await delayed(event, delaySeconds);
    noteSignal(event.commandId);
  };
  const send = queues.sendEvents.bind(queues);
  queues.sendEvents = async (events) => {
    await send(events);
    for (const e of events) if (e.kind === "command") noteSignal(e.commandId);
  };
  // The sweeper reports failed fires through its log (quiet otherwise): count them.
  s.log = (msg, fields) => {
    const key = `${msg}: ${String(fields?.error ?? fields?.started ?? "")
      .split("\n")[0]
      ?.slice(0, 120)}`;
    log.errors.set(key, (log.errors.get(key) ?? 0) + 1);
  };
  return log;
}

interface SweepRecord {
  sweeper: number;
  t0: number;
  t1: number;
  shards: string[];
}

/**
 * Sweeps every `periodMs` from `phaseMs` on, skipping ticks while a sweep runs (as standalone's
 * timer does). @returns stop(): waits for the sweep under way, then releases the leases.
 */
function startLoop(
  k: number,
  sweeper: ScheduleSweeper,
  phaseMs: number,
  out: SweepRecord[],
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (stopped || running) return;
    const t0 = epochNow();
    running = sweeper
      .sweep()
      .then(
        (r) => void out.push({ sweeper: k, t0, t1: epochNow(), shards: r.shards }),
        () => void out.push({ sweeper: k, t0, t1: epochNow(), shards: [] }),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(() => {
    tick();
    timer = setInterval(tick, SWEEP_MS);
  }, phaseMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
      await sweeper.stop();
    },
  };
}

/** Sweeps of one shard by different sweepers whose time spans overlap. */
function overlappingShardSweeps(sweeps: SweepRecord[]): number {
  let n = 0;
  for (let i = 0; i < sweeps.length; i++) {
    const a = sweeps[i] as SweepRecord;
    for (let j = i + 1; j < sweeps.length; j++) {
      const b = sweeps[j] as SweepRecord;
      if (a.sweeper === b.sweeper || a.t1 <= b.t0 || b.t1 <= a.t0) continue;
      if (a.shards.some((s) => b.shards.includes(s))) n++;
    }
  }
  return n;
}

/** Client-side latency of every AWS request while `on()`, by `Service.Operation`. */
function timeRequests(clients: AwsClients, on: () => boolean): Map<string, number[]> {
  const lat = new Map<string, number[]>();
  const mw = (service: string) =>
    ((next: (a: unknown) => Promise<unknown>, ctx: { commandName?: string }) =>
      async (args: unknown) => {
        const t = performance.now();
        try {
          return await next(args);
        } finally {
          if (on()) {
            const op = `${service}.${(ctx.commandName ?? "?").replace(/Command$/, "")}`;
            const list = lat.get(op) ?? [];
            lat.set(op, list);
            list.push(performance.now() - t);
          }
        }
      }) as never;
  clients.dynamo.middlewareStack.add(mw("DynamoDB"), {
    step: "initialize",
    name: "benchSchedTimer",
  });
  clients.sqs.middlewareStack.add(mw("SQS"), { step: "initialize", name: "benchSchedTimer" });
  return lat;
}

/** Emulator child processes of this process: pid → "dynamodb" | "sqs" (Linux /proc). */
function emulatorPids(): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== process.pid) continue;
      const m = /emulator-main\.ts .* (dynamodb|sqs)\s*$/.exec(
        readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0").join(" "),
      );
      if (m) out.set(Number(e), m[1] as string);
    } catch {}
  }
  return out;
}

/** Every fire record of the ledger (Scan, paginated). */
async function scanFires(
  clients: AwsClients,
  table: string,
): Promise<
  Array<{ scheduleId: string; nominalTime: number; actualTime: number; decision: string }>
> {
  const out: Array<{
    scheduleId: string;
    nominalTime: number;
    actualTime: number;
    decision: string;
  }> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const r = await clients.dynamo.send(
      new ScanCommand({
        TableName: table,
        ProjectionExpression: "scheduleId, nominalTime, actualTime, #d",
        ExpressionAttributeNames: { "#d": "decision" },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    out.push(...((r.Items ?? []) as typeof out));
    start = r.LastEvaluatedKey;
  } while (start);
  return out;
}

async function runOnce(n: number, sweepers: number, profile: boolean): Promise<ScheduleRunFigures> {
  const say = (m: string) => process.stderr.write(`[schedules ${n}×${sweepers}] ${m}\n`);
  const othersBefore = await waitForQuiet(30_000);
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-bench-sched-"));
  // --profile: the emulator processes write V8 CPU profiles of their whole life on exit.
  const profDir = join(tmpdir(), "shoal-bench", `emulators-${Date.now()}`);
  const nodeOptions = process.env.NODE_OPTIONS;
  if (profile) {
    mkdirSync(profDir, { recursive: true });
    process.env.NODE_OPTIONS = `${nodeOptions ?? ""} --cpu-prof --cpu-prof-dir=${profDir}`.trim();
  }
  const em = await startEmulatorProcess(dataDir);
  if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
  else process.env.NODE_OPTIONS = nodeOptions;
  const pids = emulatorPids();
  const loops: Array<{ stop(): Promise<void> }> = [];
  // The environment's settings, with this run's data directory and the emulators' endpoints.
  const { [ENV.eventsQueueUrl]: _ignored, ...inherited } = process.env;
  const config0 = configFromEnv({
    ...inherited,
    [ENV.dataDir]: dataDir,
    [ENV.autoCreateQueues]: "true",
    [ENV.quiet]: "true",
  });
  const aws = {
    region: "us-east-1",
    endpoints: { dynamodb: em.dynamodbEndpoint, sqs: em.sqsEndpoint },
    credentials: { accessKeyId: "bench", secretAccessKey: "bench" },
  };
  const clients = createAwsClients(aws);
  try {
    await ensureTables(clients.dynamo, config0.tables);
    const eventsUrl = await ensureEventsQueue(clients.sqs, config0.prefix);
    const signalsUrl = await ensureSignalsQueue(clients.sqs, config0.prefix);
    await ensureTaskQueues(clients.sqs, config0.prefix, "default");
    const config = { ...config0, aws, eventsQueueUrl: eventsUrl };
    const rt = createRuntime(config, { clients, ...autoCreatedQueues(config, clients.sqs) });
    let timing = false;
    const latency = timeRequests(clients, () => timing);
    const put = await handleApiEvent(
      rt.api,
      apiEvent("PUT", `/v1/workflows/${WORKFLOW}`, {
        description: "scheduled by the schedules benchmark",
        tasks: [{ code: "t1", type: "SHELL", command: "true" }],
      }),
    );
    if ((put.statusCode ?? 200) >= 300)
      throw new Error(`PUT workflow: ${put.statusCode} ${put.body}`);

    // Pilot: schedules due far in the future (they never fire here) give the creation rate, and
    // from it T0, so that the measured schedules are all written before they are due.
    // Its first half warms up (JIT, connections) and is not timed.
    const pilot = Math.min(2_000, Math.max(200, Math.round(n / 50)));
    const never = Date.UTC(2100, 0, 1);
    await createSchedules(rt, pilot / 2, never, []);
    const pilotMs = await createSchedules(rt, pilot / 2, never, []);
    const leadMs = Math.ceil(((2 * n * pilotMs) / pilot) * CREATE_MARGIN + LEAD_SLACK_MS);
    const t0 = Math.ceil((Date.now() + leadMs) / 1000) * 1000;
    say(`pilot ${pilot / 2} in ${Math.round(pilotMs)} ms; T0 in ${Math.round(leadMs / 1000)} s`);
    const created: Array<{ id: string; shard: string }> = [];
    const createMs = await createSchedules(rt, n, t0, created, (d) => say(`created ${d}`));
    const perShard = Array.from({ length: SCHEDULE_SHARDS }, () => 0);
    for (const c of created) perShard[Number(c.shard)] = (perShard[Number(c.shard)] ?? 0) + 1;
    const slackMs = t0 - Date.now();
    say(`created ${n} in ${Math.round(createMs)} ms, ${Math.round(slackMs)} ms before T0`);

    const listDue = rt.scheduling.schedules.listDue.bind(rt.scheduling.schedules);
    const fl = instrumentFires(rt);
    const sweeps: SweepRecord[] = [];
    for (let k = 0; k < sweepers; k++) {
      const sw = rt.scheduleSweeper(`bench-sweeper-${k}`, SWEEP_MS, LOOKAHEAD_MS);
      loops.push(startLoop(k, sw, (k * SWEEP_MS) / sweepers, sweeps));
    }
    // The window opens just before the first fire the look-ahead allows.
    await sleep(t0 - LOOKAHEAD_MS - 500 - Date.now());
    const profiler = profile ? new Profiler() : undefined;
    await profiler?.start();
    clients.counter.reset();
    timing = true;
    const cpu0 = process.cpuUsage();
    const emu0 = emulatorCpuMs();
    const machine0 = machineBusyMs();
    const elu0 = performance.eventLoopUtilization();
    const w0 = performance.now();
    const deadline = t0 + FIRE_DEADLINE_MS;
    let lastSay = Date.now();
    let stalled = false;
    // Done once every schedule has its fire record, its signal and its update; or, when nothing
    // moved for STALL_MS after T0, once the due index lists nothing more up to T0 (see
    // dynaliteIndexPrefix: some schedules may be invisible to the sweepers).
    while (
      (fl.written.length < n || fl.signalled.size < n || fl.updated.length < n) &&
      Date.now() < deadline
    ) {
      await sleep(100);
      if (Date.now() > t0 && epochNow() - Math.max(fl.lastProgress, t0) > STALL_MS) {
        const due = await Promise.all(
          Array.from({ length: SCHEDULE_SHARDS }, (_, k) => listDue(String(k), t0, 1)),
        );
        if (due.every((d) => d.length === 0)) {
          stalled = true;
          break;
        }
      }
      if (Date.now() - lastSay > 15_000) {
        lastSay = Date.now();
        say(
          `T0${Date.now() >= t0 ? "+" : ""}${round((Date.now() - t0) / 1000, 0)} s: ${fl.written.length} fired`,
        );
      }
    }
    // A stalled run's window includes the STALL_MS wait (idle sweeps: a few requests).
    const windowMs = performance.now() - w0;
    timing = false;
    const cpu = process.cpuUsage(cpu0);
    const emu1 = emulatorCpuMs();
    const machineMs = machineBusyMs() - machine0;
    const elu = performance.eventLoopUtilization(elu0);
    const counts = new Map(clients.counter.counts);
    const raw: CpuProfile | undefined = await profiler?.stop();
    for (const l of loops.splice(0)) await l.stop();
    say(`window ${Math.round(windowMs)} ms, ${fl.written.length} fired; reading the ledger`);

    // The ledger, read back: every record, and a sample through the store's own listFires.
    const ledger = await scanFires(clients, rt.config.tables.fires);
    const measured = ledger.filter((f) => f.nominalTime === t0);
    const missing = neverFired(created, new Set(measured.map((f) => f.scheduleId)));
    const sample = measured.filter(
      (_, i) => i % Math.max(1, Math.floor(measured.length / 200)) === 0,
    );
    let mismatches = 0;
    for (const f of sample) {
      const page = await rt.scheduling.fires.listFires(f.scheduleId, { limit: 10 });
      const [only] = page.items;
      if (page.items.length !== 1 || only?.actualTime !== f.actualTime) mismatches++;
    }
    let signalsQueued = 0;
    for (const url of [signalsUrl, eventsUrl]) {
      const q = await clients.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed"],
        }),
      );
      signalsQueued +=
        Number(q.Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(q.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0);
    }

    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const of = (svc: string) =>
      [...counts].reduce((a, [k, v]) => a + (k.startsWith(`${svc}.`) ? v : 0), 0);
    const fired = fl.written.length;
    const per = (x: number) => round(x / Math.max(1, fired), 2);
    const ownMs = (cpu.user + cpu.system) / 1000;
    const ddbMs = (emu1?.dynamodb ?? Number.NaN) - (emu0?.dynamodb ?? Number.NaN);
    const sqsMs = (emu1?.sqs ?? Number.NaN) - (emu0?.sqs ?? Number.NaN);
    const pct = (x: number) => round((x / windowMs) * 100, 0);
    const latencyMs: ScheduleRunFigures["latencyMs"] = {};
    let sumLatency = 0;
    for (const [op, list] of [...latency].sort((a, b) => b[1].length - a[1].length)) {
      const totalMs = list.reduce((a, b) => a + b, 0);
      sumLatency += totalMs;
      latencyMs[op] = { ...summary(list), totalMs: round(totalMs, 0) };
    }
    // Lists can hold 100,000 values: no spreading into Math.min/max (call stack).
    const firstWritten = fl.written.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    const lastWritten = fl.written.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
    const last = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
    const signalTimes = [...fl.signalled.values()];
    const figures: ScheduleRunFigures = {
      schedules: n,
      sweepers,
      complete: measured.length >= n,
      stalled,
      neverFired: {
        count: missing.ids.length,
        sharingIndexEntry: missing.sharingIndexEntry,
        expectedSharing: missing.expectedSharing,
        sample: missing.ids.slice(0, 5),
      },
      perShard,
      creation: {
        ms: round(createMs, 0),
        perSecond: round(n / (createMs / 1000), 0),
        pilot,
        leadMs,
        slackMs: round(slackMs, 0),
      },
      fired,
      firesPerSecond: round(fired / ((lastWritten - firstWritten) / 1000), 0),
      ledgerLatenessMs: summary(measured.map((f) => f.actualTime - f.nominalTime)),
      writtenLatenessMs: summary(fl.written.map((t) => t - t0)),
      signalLatenessMs: summary(signalTimes.map((t) => t - t0)),
      withinGoalPct: round((fl.written.filter((t) => t - t0 <= GOAL_MS).length / n) * 100, 1),
      t0ToLastFireMs: round(lastWritten - t0, 0),
      t0ToLastSignalMs: round(last(signalTimes) - t0, 0),
      t0ToLastUpdateMs: round(last(fl.updated) - t0, 0),
      requests: {
        total,
        perFire: per(total),
        dynamodbPerFire: per(of("DynamoDB")),
        sqsPerFire: per(of("SQS")),
        byOperationPerFire: Object.fromEntries(
          [...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, per(v)]),
        ),
      },
      latencyMs,
      meanInFlight: round(sumLatency / windowMs, 1),
      cpu: {
        windowMs: round(windowMs, 0),
        benchPct: pct(ownMs),
        dynalitePct: pct(ddbMs),
        fauxqsPct: pct(sqsMs),
        othersPct: pct(machineMs - ownMs - ddbMs - sqsMs),
        othersBeforePct: othersBefore,
        eventLoopUtilization: round(elu.utilization, 2),
        perFireMs: { bench: per(ownMs), dynalite: per(ddbMs), fauxqs: per(sqsMs) },
        ceilingFiresPerSecond: {
          bench: round((1000 * fired) / ownMs, 0),
          dynalite: round((1000 * fired) / ddbMs, 0),
          machine: round((1000 * cpus().length * fired) / (ownMs + ddbMs + sqsMs), 0),
        },
      },
      sweeps: {
        count: sweeps.length,
        durationMs: summary(sweeps.map((s) => s.t1 - s.t0)),
        duplicateFireWrites: fl.duplicates,
        staleReads: fl.staleReads,
        lostUpdates: fl.lostUpdates,
        listDueQueries: fl.listDue,
        overlappingShardSweeps: overlappingShardSweeps(sweeps),
        errors: Object.fromEntries(fl.errors),
      },
      signalsQueued,
      ledgerChecked: {
        scanned: ledger.length,
        fired: measured.filter((f) => f.decision === "FIRED").length,
        listFiresSample: sample.length,
        mismatches,
      },
    };
    if (raw) figures.profile = summarizeProfile(raw, 15);
    await em.stop();
    if (profile) figures.emulatorProfiles = readEmulatorProfiles(profDir, pids);
    return figures;
  } finally {
    for (const l of loops) await l.stop().catch(() => {});
    await em.stop().catch(() => {});
    clients.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Summaries of the emulators' --cpu-prof files (named CPU.<date>.<pid>.…), by emulator. */
function readEmulatorProfiles(
  dir: string,
  pids: Map<number, string>,
): Record<string, ProfileSummary & { file: string }> {
  const out: Record<string, ProfileSummary & { file: string }> = {};
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)) {
    const pid = Number(/^CPU\.\d+\.\d+\.(\d+)\./.exec(f)?.[1]);
    const which = pids.get(pid);
    if (!which) continue;
    const p = JSON.parse(readFileSync(join(dir, f), "utf8")) as CpuProfile;
    out[which === "dynamodb" ? "dynalite" : "fauxqs"] = {
      ...summarizeProfile(p, 12),
      file: join(dir, f),
    };
  }
  return out;
}

function profileTables(title: string, p: ProfileSummary): string[] {
  return [
    `${title} (${p.totalMs} ms):`,
    table([
      ["time by owner", "ms", "%"],
      ...p.byOwner.slice(0, 10).map((o) => [o.owner, o.ms, o.pct]),
    ]),
    table([
      ["busiest functions (self time)", "ms", "%"],
      ...p.topFunctions.slice(0, 12).map((f) => [f.fn.slice(0, 110), f.ms, f.pct]),
    ]),
  ];
}

/** A table with one row per run: [header, cell] per column. */
type Column = [string, (r: ScheduleRunFigures) => string | number];
const perRun = (runs: ScheduleRunFigures[], cols: Column[]) =>
  table([cols.map((c) => c[0]), ...runs.map((r) => cols.map((c) => c[1](r)))]);
const secs = (ms: number) => round(ms / 1000, 1);
const pcts = (x: Summary) => `${x.p50} / ${x.p90} / ${x.p99} / ${x.max}`;

/**
 * The scenario: `opts.schedules` schedules (default 20,000), once per sweeper count in
 * `opts.sweepers` (default 1 and 2), each on fresh emulators. With `opts.profile`, CPU profiles
 * of the bench process (firing window) and of both emulator processes (their whole life).
 */
export async function schedules(opts: ScenarioOptions): Promise<ScenarioResult> {
  const n = opts.schedules ?? DEFAULT_SCHEDULES;
  const runs: ScheduleRunFigures[] = [];
  for (const s of opts.sweepers ?? [1, 2]) runs.push(await runOnce(n, s, opts.profile));
  const best = runs.reduce((a, b) => (b.firesPerSecond > a.firesPerSecond ? b : a));
  const goalMet = n >= GOAL_SCHEDULES && runs.some((r) => r.complete && r.withinGoalPct === 100);
  const tables = [
    `== schedules: ${n} one-time schedules of one ONLINE workflow, all due at T0; sweepers in this process every ${SWEEP_MS} ms with ${LOOKAHEAD_MS} ms look-ahead; ${SCHEDULE_SHARDS} shards; no dispatcher (START commands and their signals pile up)`,
    `schedules per shard: ${runs[0]?.perShard.join(", ")}`,
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["created/s", (r) => r.creation.perSecond],
      ["create s", (r) => secs(r.creation.ms)],
      ["slack before T0 s", (r) => secs(r.creation.slackMs)],
      ["fired", (r) => r.ledgerChecked.fired],
      [
        "never fired (dynalite index clash / expected)",
        (r) =>
          `${r.neverFired.count} (${r.neverFired.sharingIndexEntry} / ${r.neverFired.expectedSharing})`,
      ],
      ["fires/s", (r) => r.firesPerSecond],
      ["T0→last fire s", (r) => secs(r.t0ToLastFireMs)],
      ["T0→last signal s", (r) => secs(r.t0ToLastSignalMs)],
      [`within ${GOAL_MS / 1000} s %`, (r) => r.withinGoalPct],
      ["requests/fire", (r) => r.requests.perFire],
      ["DynamoDB/fire", (r) => r.requests.dynamodbPerFire],
      ["SQS/fire", (r) => r.requests.sqsPerFire],
      ["mean in flight", (r) => r.meanInFlight],
    ]),
    "lateness, ms (p50 / p90 / p99 / max): ledger = fire.actualTime − nominal (decision time; negative = within the look-ahead); written = fire record written − nominal (this process's clock); signal = START signal accepted by SQS − nominal",
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["ledger", (r) => pcts(r.ledgerLatenessMs)],
      ["written", (r) => pcts(r.writtenLatenessMs)],
      ["signal", (r) => pcts(r.signalLatenessMs)],
    ]),
    "CPU over the window (% of one core; 2 cores = 200 %), CPU ms per fire, and the fires/s those costs allow (ceiling: one process alone on a core; machine: all three on every core, nothing else running):",
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["window s", (r) => secs(r.cpu.windowMs)],
      ["bench process", (r) => r.cpu.benchPct],
      ["dynalite process", (r) => r.cpu.dynalitePct],
      ["fauxqs process", (r) => r.cpu.fauxqsPct],
      ["others", (r) => r.cpu.othersPct],
      ["others before", (r) => r.cpu.othersBeforePct],
      ["bench ELU", (r) => r.cpu.eventLoopUtilization],
      ["ms/fire bench", (r) => r.cpu.perFireMs.bench],
      ["dynalite", (r) => r.cpu.perFireMs.dynalite],
      ["fauxqs", (r) => r.cpu.perFireMs.fauxqs],
      ["ceiling: bench", (r) => r.cpu.ceilingFiresPerSecond.bench],
      ["dynalite", (r) => r.cpu.ceilingFiresPerSecond.dynalite],
      ["machine", (r) => r.cpu.ceilingFiresPerSecond.machine],
    ]),
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["sweeps", (r) => r.sweeps.count],
      ["sweep ms p50", (r) => r.sweeps.durationMs.p50],
      ["max", (r) => r.sweeps.durationMs.max],
      ["listDue queries", (r) => r.sweeps.listDueQueries],
      ["duplicate fire writes", (r) => r.sweeps.duplicateFireWrites],
      ["stale reads", (r) => r.sweeps.staleReads],
      ["lost updates", (r) => r.sweeps.lostUpdates],
      ["overlapping shard sweeps", (r) => r.sweeps.overlappingShardSweeps],
      ["signals queued", (r) => r.signalsQueued],
      ["ledger FIRED", (r) => r.ledgerChecked.fired],
      [
        "listFires sample ≠",
        (r) => `${r.ledgerChecked.mismatches}/${r.ledgerChecked.listFiresSample}`,
      ],
    ]),
    ...runs.flatMap((r) => runDetails(r)),
    goalMet
      ? `goal met: ${GOAL_SCHEDULES} fired within ${GOAL_MS / 1000} s of nominal`
      : `goal (${GOAL_SCHEDULES} fired within ${GOAL_MS / 1000} s) not met; at the best rate (${best.firesPerSecond} fires/s, ${best.sweepers} sweeper(s)) ${GOAL_SCHEDULES} take ≈ ${round(GOAL_SCHEDULES / best.firesPerSecond, 0)} s to fire and ≈ ${round(GOAL_SCHEDULES / best.creation.perSecond, 0)} s to create${n < GOAL_SCHEDULES ? ` (extrapolated from ${n})` : ""}; ${GOAL_MS / 1000} s needs ≥ ${GOAL_SCHEDULES / (GOAL_MS / 1000)} fires/s`,
  ];
  return {
    name: "schedules",
    summary: { schedules: n, goalMet, bestFiresPerSecond: best.firesPerSecond, runs },
    tables,
  };
}

/** One run's requests by operation, request latencies, errors and profiles. */
function runDetails(r: ScheduleRunFigures): string[] {
  const ops = Object.entries(r.requests.byOperationPerFire)
    .map(([k, v]) => `${k.replace(/^(DynamoDB|SQS)\./, "")} ${v}`)
    .join(", ");
  const errors = Object.keys(r.sweeps.errors).length
    ? `; sweeper errors: ${JSON.stringify(r.sweeps.errors)}`
    : "";
  const latency = Object.entries(r.latencyMs).map(([op, s]) => [
    op,
    s.n,
    s.mean,
    s.p50,
    s.p90,
    s.p99,
    s.max,
    s.totalMs,
  ]);
  return [
    `${r.sweepers} sweeper(s): requests per fire by operation: ${ops}${errors}`,
    table([
      ["request latency ms", "count", "mean", "p50", "p90", "p99", "max", "sum ms"],
      ...latency,
    ]),
    ...(r.profile
      ? profileTables(`bench process profile, firing window, ${r.sweepers} sweeper(s)`, r.profile)
      : []),
    ...Object.entries(r.emulatorProfiles ?? {}).flatMap(([k, p]) =>
      profileTables(
        `${k} process profile (its whole life: creation and firing), ${r.sweepers} sweeper(s)`,
        p,
      ),
    ),
  ];
}

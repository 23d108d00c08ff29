/**
 * One run of the schedules scenario (schedules.ts) for one sweeper count: fresh emulator
 * processes, the workflow and the schedules created, the sweepers started, the firing window
 * measured, the ledger read back, the figures computed.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { handleApiRequest } from "../lib/api/router.js";
import { createAwsClients } from "../lib/aws/clients.js";
import { configFromEnv, ENV } from "../lib/aws/config.js";
import { createRuntime } from "../lib/runtime/runtime.js";
import {
  autoCreatedQueues,
  ensureEventsQueue,
  ensureSignalsQueue,
  ensureTables,
  ensureTaskQueues,
} from "../lib/standalone/provision.js";
import { startStorageBackend } from "../lib/standalone/storage-backend.js";
import { SCHEDULE_SHARDS } from "../lib/store/schedules.js";
import { benchBackend } from "./backend.js";
import { epochNow } from "./instrumentation.js";
import { emulatorCpuMs, emulatorPids, machineBusyMs, waitForQuiet } from "./proc-cpu.js";
import { type CpuProfile, Profiler, type ProfileSummary, summarizeProfile } from "./profile.js";
import {
  CREATE_MARGIN,
  FIRE_DEADLINE_MS,
  GOAL_MS,
  LEAD_SLACK_MS,
  LOOKAHEAD_MS,
  STALL_MS,
  SWEEP_MS,
  WORKFLOW,
} from "./schedules-config.js";
import { apiEvent, createSchedules } from "./schedules-create.js";
import { type ScheduleRunFigures, summary } from "./schedules-figures.js";
import { instrumentFires, timeRequests } from "./schedules-instrument.js";
import { neverFired, scanFires } from "./schedules-ledger.js";
import { overlappingShardSweeps, type SweepRecord, startLoop } from "./schedules-sweep-loop.js";
import { round } from "./stats.js";

const sleep = (ms: number) => delay(Math.max(0, ms));

/**
 * Creates `n` schedules due at one instant T0 and fires them with `sweepers` schedule sweepers;
 * with `profile`, CPU profiles of this process (firing window) and of the emulator processes.
 */
export async function runOnce(
  n: number,
  sweepers: number,
  profile: boolean,
): Promise<ScheduleRunFigures> {
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
  const em = await startStorageBackend(benchBackend(), dataDir, {});
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
    ...(em.embeddedDir ? { embeddedDir: em.embeddedDir } : {}),
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
    const put = await handleApiRequest(
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

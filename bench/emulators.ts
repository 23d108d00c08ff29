/**
 * 5. Per-request latency of the embedded emulators and the cost of spawning a task process,
 * measured alone (nothing else running), with the request shapes the engine sends. This is the
 * floor under every engine figure: a hop is a chain of these.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createAwsClients } from "../lib/aws/clients.js";
import { resourceNames } from "../lib/aws/config.js";
import { startEmulators } from "../lib/standalone/emulators.js";
import { ensureEventsQueue, ensureTables, ensureTaskQueues } from "../lib/standalone/provision.js";
import { measureBatchWrite, measureDynamoDB } from "./emulators-dynamodb.js";
import {
  lastCpuMsPerOp,
  type MeasureContext,
  type Row,
  rate,
  timeEach,
} from "./emulators-measure.js";
import { measureSqsFifoAndWakeUp, measureSqsStandard } from "./emulators-sqs.js";
import { childCpuMs, machineBusyMs, waitForQuiet } from "./proc-cpu.js";
import type { ScenarioOptions, ScenarioResult } from "./scenario.js";
import { round, summarize, table } from "./stats.js";

/** Spawns `/bin/sh -c true` as the worker spawns a task process. @returns once it exited. */
function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", "true"], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.once("error", reject);
    child.once("exit", () => resolve());
    child.stdout.resume();
    child.stderr.resume();
  });
}

/**
 * Every request figure on fresh emulators, on disk (`persist`) or in memory, added to `rows` in
 * the table's order (which is also the order they run in).
 */
async function measure(persist: boolean, rows: Row[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-emu-"));
  const em = await startEmulators(persist ? { dataDir: dir } : {});
  const store = persist ? "on disk" : "in memory";
  try {
    // Clients come from the one factory, configured with these emulators' endpoints.
    const clients = createAwsClients({
      region: "us-east-1",
      endpoints: { dynamodb: em.dynamodbEndpoint, sqs: em.sqsEndpoint },
      credentials: { accessKeyId: "bench", secretAccessKey: "bench" },
    });
    const ddb = clients.dynamo;
    const sqs = clients.sqs;
    const prefix = "bench";
    const names = resourceNames(prefix);
    await ensureTables(ddb, names.tables);
    const eventsUrl = await ensureEventsQueue(sqs, prefix);
    const [, , taskUrl] = await ensureTaskQueues(sqs, prefix, "default");
    const ctx: MeasureContext = {
      ddb,
      sqs,
      names,
      eventsUrl,
      // The MEDIUM-priority queue: ensureTaskQueues makes one per priority, so it is there.
      taskUrl: taskUrl as string,
      N: 300,
      B: 50,
      store,
      rows,
      add: (what, list, perSecond) =>
        rows.push({
          what,
          store,
          s: summarize(list),
          cpuMs: lastCpuMsPerOp(),
          ...(perSecond !== undefined ? { perSecond } : {}),
        }),
    };
    await measureDynamoDB(ctx);
    await measureSqsStandard(ctx);
    await measureBatchWrite(ctx);
    await measureSqsFifoAndWakeUp(ctx);
    clients.destroy();
  } finally {
    await em.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 5. The scenario: both stores, then spawning task processes; one table. */
export async function emulators(_opts: ScenarioOptions): Promise<ScenarioResult> {
  const rows: Row[] = [];
  const othersBefore = await waitForQuiet();
  const machine0 = machineBusyMs();
  const own0 = process.cpuUsage();
  const children0 = childCpuMs();
  const t0 = performance.now();
  await measure(true, rows);
  await measure(false, rows);
  const spawnSeq = await timeEach(200, () => spawnTrue());
  rows.push({
    what: "spawn /bin/sh -c true until exit",
    store: "-",
    s: summarize(spawnSeq),
    cpuMs: lastCpuMsPerOp(),
  });
  const spawnRate8 = await rate(400, 8, () => spawnTrue());
  rows.push({
    what: "spawn /bin/sh -c true, 8 concurrent",
    store: "-",
    s: summarize([]),
    perSecond: spawnRate8,
    cpuMs: lastCpuMsPerOp(),
  });
  // How long the spawn() call itself blocks the event loop (fork/exec happen synchronously).
  const blocked: number[] = [];
  for (let i = 0; i < 200; i++) {
    let t = 0;
    await new Promise<void>((resolve, reject) => {
      t = performance.now();
      const child = spawn("/bin/sh", ["-c", "true"], {
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      blocked.push(performance.now() - t);
      child.once("error", reject);
      child.once("exit", () => resolve());
      child.stdout.resume();
      child.stderr.resume();
    });
  }
  rows.push({ what: "spawn() call blocking the event loop", store: "-", s: summarize(blocked) });
  const wall = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const othersPct = round(
    ((machineBusyMs() - machine0 - (own.user + own.system) / 1000 - (childCpuMs() - children0)) /
      wall) *
      100,
    1,
  );
  const tables = [
    "== emulators: request latency, one caller, nothing else running (ms); the emulators run in this process here, " +
      `so 'CPU ms/op' is client + emulator (other processes on the machine: ${othersBefore}% before, ${othersPct}% during)`,
    table([
      ["request", "store", "n", "p50", "p90", "p99", "mean", "ops/s", "CPU ms/op"],
      ...rows.map((r) => [
        r.what,
        r.store,
        r.s.n,
        r.s.p50,
        r.s.p90,
        r.s.p99,
        r.s.mean,
        r.perSecond ?? Number.NaN,
        r.cpuMs === undefined ? Number.NaN : round(r.cpuMs, 2),
      ]),
    ]),
  ];
  return {
    name: "emulators",
    summary: Object.fromEntries([
      ["otherProcessesPct", { before: othersBefore, during: othersPct }],
      ...rows.map((r) => [
        `${r.what} [${r.store}]`,
        {
          ...r.s,
          ...(r.perSecond !== undefined ? { perSecond: r.perSecond } : {}),
          ...(r.cpuMs !== undefined ? { cpuMsPerOp: round(r.cpuMs, 3) } : {}),
        },
      ]),
    ]),
    tables,
  };
}

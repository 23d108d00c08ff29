/**
 * Runs workflows on a metered standalone (bench/harness.ts with cost-meter.ts on every client
 * bundle: this process's runtime and the `shoal worker` child's) and returns what each run used.
 * The run's end is seen on the in-process event bus, so no API polling adds requests.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { LocalEventBus } from "../lib/events/local-event-bus.js";
import { getInstance, ms, putWorkflow, startRun } from "./api.js";
import { addCounts, type CostCounts, CostMeter } from "./cost-meter.js";
import { rawDynamoClient } from "./cost-wire.js";
import { prefixStripper } from "./cost-worker.js";
import { type Harness, startHarness } from "./harness.js";

const FINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);

/** A metered harness. */
export interface CostRig {
  h: Harness;
  meter: CostMeter;
  /** Counts kept in this process besides the meter's (dispatcher handler, events). */
  local: CostCounts;
  finals: Map<string, string>;
  stop(): Promise<void>;
}

/** What one run used. */
export interface ShapeRun {
  shape: string;
  tasks: number;
  state: string;
  wallMs: number;
  /** Meter counts of every process, plus `lambda.*`, `events.*`, `logs.*`. */
  counts: CostCounts;
  /** Sum over tasks of endedAt − startedAt, ms (the tasks' own compute, reported apart). */
  taskMs: number;
}

/**
 * Starts a harness with `workers` slots in one `shoal worker` child, metered.
 * @param env extra environment for standalone and its worker (e.g. lease settings), restored after start.
 */
export async function startCostRig(
  workers: number,
  env: Record<string, string> = {},
): Promise<CostRig> {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries({ ...env, SHOAL_BENCH_COST: "1" })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  let h: Harness;
  try {
    h = await startHarness(workers, { externalProcesses: 1 });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const { runtime } = h.standalone;
  const meter = new CostMeter(
    rawDynamoClient(runtime.config.aws),
    prefixStripper(runtime.config.prefix),
    undefined,
    // The engine component whose handler sends the request (the harness's AsyncLocalStorage).
    () => h.instr.als.getStore() ?? "standalone",
  );
  meter.instrumentDynamo(runtime.clients.dynamo as never);
  meter.instrumentSqs(runtime.clients.sqs as never);
  const local: CostCounts = {};
  const add = (k: string, n = 1) => {
    local[k] = (local[k] ?? 0) + n;
  };
  // The dispatcher Lambda's work: one call per batch of ≤ 10 messages, as the stack's event
  // source (batchSize 10) and standalone's poller (batchSize 10) both hand them.
  const d = runtime.dispatcher as unknown as {
    handleBatch: (r: readonly unknown[]) => Promise<unknown>;
  };
  const handle = d.handleBatch.bind(d);
  d.handleBatch = async (records) => {
    const t = performance.now();
    try {
      return await handle(records);
    } finally {
      add("lambda.dispatcher.calls");
      add("lambda.dispatcher.msgs", records.length);
      add("lambda.dispatcher.ms", Math.ceil(performance.now() - t));
    }
  };
  const finals = new Map<string, string>();
  const bus = (runtime.api as { bus?: LocalEventBus }).bus;
  bus?.subscribe(async (e) => {
    const type = String(e["detail-type"]);
    const kind = type.includes("Task")
      ? "task"
      : type.includes("Workflow Instance")
        ? "instance"
        : "other";
    // A PutEvents entry's size: Source, DetailType, Detail, Resources, and 14 bytes of Time
    // (EventBridge pricing: each 64 KB chunk of an entry is one event).
    const bytes =
      14 +
      Buffer.byteLength(String(e.source)) +
      Buffer.byteLength(type) +
      Buffer.byteLength(JSON.stringify(e.detail ?? {})) +
      ((e.resources as string[] | undefined) ?? []).reduce((a, r) => a + Buffer.byteLength(r), 0);
    add(`events.${kind}`);
    add("events.billed", Math.max(1, Math.ceil(bytes / 65536)));
    add("events.bytes", bytes);
    const detail = e.detail as { instanceId?: string; state?: string } | undefined;
    if (kind === "instance" && detail?.instanceId && detail.state && FINAL.has(detail.state))
      finals.set(detail.instanceId, detail.state);
  });
  return {
    h,
    meter,
    local,
    finals,
    stop: () => h.stop(),
  };
}

/** Task log files of the data directory: bytes, lines (log events) and files (attempts). */
function logTotals(dir: string): { bytes: number; lines: number; files: number } {
  const t = { bytes: 0, lines: 0, files: 0 };
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else if (n.endsWith(".log")) {
        t.files++;
        t.bytes += s.size;
        const text = readFileSync(p, "utf8");
        t.lines += text ? text.split("\n").filter((l) => l.length > 0).length : 0;
      }
    }
  };
  walk(dir);
  return t;
}

function askChild(rig: CostRig, msg: string, key: string): Promise<CostCounts> {
  const children = rig.h.external?.children ?? [];
  return Promise.all(
    children.map(
      (c) =>
        new Promise<CostCounts>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`worker did not answer '${msg}'`)),
            10_000,
          );
          const on = (m: unknown) => {
            if (m && typeof m === "object" && key in m) {
              clearTimeout(timer);
              c.off("message", on);
              resolve(((m as Record<string, unknown>)[key] as CostCounts) ?? {});
            }
          };
          c.on("message", on);
          c.send(msg);
        }),
    ),
  ).then((all) => all.reduce((a, b) => addCounts(a, typeof b === "object" ? b : {}), {}));
}

/** Runs `definition` once as workflow `name` and returns what it used. */
export async function runShape(
  rig: CostRig,
  shape: string,
  name: string,
  definition: { tasks: unknown[] },
  deadlineMs = 400_000,
): Promise<ShapeRun> {
  const { h } = rig;
  await putWorkflow(h.apiUrl, name, definition);
  await new Promise((r) => setTimeout(r, 300)); // the PUT's writes and events settle
  const logsDir = join(h.dataDir, "logs");
  const logs0 = logTotals(logsDir);
  await askChild(rig, "reset", "reset");
  rig.meter.reset();
  for (const k of Object.keys(rig.local)) delete rig.local[k];
  const t0 = Date.now();
  const id = await startRun(h.apiUrl, name);
  while (!rig.finals.has(id)) {
    if (Date.now() - t0 > deadlineMs)
      throw new Error(`${shape}: not finished after ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const wallMs = Date.now() - t0;
  // Trailing work of the last step (message deletes, the worker's last writes).
  await new Promise((r) => setTimeout(r, 500));
  const counts = addCounts(
    addCounts({ ...rig.meter.counts }, rig.local),
    await askChild(rig, "cost", "cost"),
  );
  const logs1 = logTotals(logsDir);
  counts["logs.bytes"] = logs1.bytes - logs0.bytes;
  counts["logs.lines"] = logs1.lines - logs0.lines;
  counts["logs.files"] = logs1.files - logs0.files;
  counts["lambda.api.calls"] = 1; // the POST that started the run
  const instance = await getInstance(h.apiUrl, id);
  const taskMs = instance.tasks.reduce(
    (a, t) => a + Math.max(0, ms(t.endedAt) - ms(t.startedAt) || 0),
    0,
  );
  return {
    shape,
    tasks: definition.tasks.length,
    state: rig.finals.get(id) ?? "?",
    wallMs,
    counts,
    taskMs,
  };
}

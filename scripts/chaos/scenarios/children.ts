/**
 * Scenario 3: `kill -9` of each child of `shoal standalone` in turn (the DynamoDB emulator, the
 * SQS emulator, the built-in worker), under load. Health must reflect it: `/v1/health` answers
 * 503 within 5 s of the kill and 200 again within 30 s (standalone restarts the child).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Check, Kill } from "../invariants.js";
import { latencySummary, replacementLatencies } from "../invariants.js";
import { health, Submitter } from "../load.js";
import { childMatching, freePort, heldTasks, startStandalone } from "../processes.js";
import { finishRuns, type Scenario, setUpLoad, tearDown } from "../scenario.js";

/**
 * Standalone's crash-loop rule (lib/standalone/supervisor.ts, emulator-process.ts): an emulator
 * that dies again within 60 s of its restart counts as a failed restart, and after 5 in a row
 * standalone stops on purpose. The scenario kills an emulator at most 4 times in a row, then
 * leaves it alone until it stayed up 60 s (the built-in worker is never given up).
 */
const STABLE_MS = 61_000;
const MAX_KILLS_IN_A_ROW = 4;

const CHILDREN = [
  { part: "dynamodb", pattern: /emulator-main\.ts .*\bdynamodb\b/ },
  { part: "sqs", pattern: /emulator-main\.ts .*\bsqs\b/ },
  { part: "worker", pattern: /worker-main\.ts/ },
] as const;

/** Health seen after one kill: ms to the first non-200, ms to 200 again. */
interface HealthTrace {
  part: string;
  degradedMs?: number;
  healthyMs?: number;
  parts?: unknown;
}

async function traceHealth(base: string, part: string): Promise<HealthTrace> {
  const t0 = Date.now();
  const trace: HealthTrace = { part };
  while (Date.now() - t0 < 35_000) {
    const h = await health(base);
    const ms = Date.now() - t0;
    if (trace.degradedMs === undefined && h.status === 503) {
      trace.degradedMs = ms;
      trace.parts = h.parts;
    }
    if (trace.degradedMs !== undefined && h.status === 200) {
      trace.healthyMs = ms;
      break;
    }
    if (trace.degradedMs === undefined && ms > 5_000) break;
    await sleep(50);
  }
  return trace;
}

export const children: Scenario = async (ctx) => {
  const port = await freePort();
  // The emulator children exist on `--backend emulators` only (the embedded backend has none;
  // the other scenarios run on it, the default).
  const sa = await startStandalone({
    dataDir: ctx.dir,
    port,
    workers: 8,
    args: ["--backend", "emulators"],
  });
  const base = () => sa.url;
  const { names, dags, effectsFile } = await setUpLoad(ctx, sa.url);
  const submitter = Submitter.start(ctx, base, names);
  const traces: HealthTrace[] = [];
  const kills: Kill[] = [];
  const missing: string[] = [];
  const end = Date.now() + ctx.faultMs;
  let round = ctx.rng.int(0, CHILDREN.length - 1);
  // Kills of each part since it last stayed up for STABLE_MS.
  const streaks = new Map<string, { kills: number; last: number }>();
  let spared = 0;
  while (Date.now() < end) {
    await sleep(ctx.rng.between(2000, 4000));
    // Each child in turn, from a seeded starting point.
    const child = CHILDREN[round++ % CHILDREN.length] ?? CHILDREN[0];
    const streak = streaks.get(child.part) ?? { kills: 0, last: 0 };
    if (Date.now() - streak.last >= STABLE_MS) streak.kills = 0;
    if (child.part !== "worker" && streak.kills >= MAX_KILLS_IN_A_ROW) {
      spared++;
      continue;
    }
    streaks.set(child.part, { kills: streak.kills + 1, last: Date.now() });
    const target = childMatching(sa.pid, child.pattern);
    if (!target) {
      missing.push(child.part);
      ctx.log(`no live ${child.part} child to kill`);
      continue;
    }
    const held = child.part === "worker" ? heldTasks(target.pid) : [];
    const at = Date.now();
    process.kill(target.pid, "SIGKILL");
    if (held.length > 0) kills.push({ at, held });
    const trace = await traceHealth(sa.url, child.part);
    traces.push(trace);
    ctx.log(
      `kill -9 ${child.part} (${target.pid}) at ${new Date(at).toISOString()}: 503 after ${trace.degradedMs ?? "-"} ms, 200 after ${trace.healthyMs ?? "-"} ms`,
    );
  }
  const done = await finishRuns(ctx, base, submitter, dags, effectsFile);
  const finalHealth = await health(sa.url);
  const orphans = await tearDown(ctx.dir);
  const bad = traces.filter(
    (t) => t.degradedMs === undefined || t.degradedMs > 5_000 || t.healthyMs === undefined,
  );
  const healthCheck: Check = {
    name: "health reflects reality",
    ok: bad.length === 0 && missing.length === 0 && finalHealth.status === 200,
    detail: `${traces.length - bad.length}/${traces.length} kills seen as 503 within 5 s and 200 within 30 s; final ${finalHealth.status}`,
    evidence: [
      ...bad.map(
        (t) =>
          `${t.part}: 503 after ${t.degradedMs ?? "never"} ms, 200 after ${t.healthyMs ?? "never"} ms`,
      ),
      ...missing.map((p) => `no live ${p} child found to kill (not restarted?)`),
    ],
  };
  const { latencies } = replacementLatencies(kills, done.effects);
  const per = (part: string) =>
    traces
      .filter((t) => t.part === part)
      .map((t) => `${((t.healthyMs ?? Number.NaN) / 1000).toFixed(1)}`)
      .join(",");
  return {
    name: ctx.name,
    figures: done.figures,
    load: done.load,
    faults: `${traces.length} child kills${spared ? ` (${spared} turns skipped: crash-loop limit)` : ""} (dynamodb ${traces.filter((t) => t.part === "dynamodb").length}, sqs ${traces.filter((t) => t.part === "sqs").length}, worker ${traces.filter((t) => t.part === "worker").length})`,
    checks: [...done.checks, healthCheck, orphans],
    notes: [
      `kill → health 200 again, s: dynamodb ${per("dynamodb") || "-"}; sqs ${per("sqs") || "-"}; worker ${per("worker") || "-"}`,
      `worker child kill → replacement attempt (p50/p99/max): ${latencySummary(latencies)}`,
    ],
  };
};

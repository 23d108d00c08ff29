/**
 * Scenarios 1 and 6: standalone with no built-in worker (`--workers 0`) and three `shoal worker`
 * processes; every 2–5 s a random worker is killed (`kill -9` of its process group) and a new
 * one started. Scenario 6 runs the same with every SQS message delivered twice
 * (SHOAL_TEST_DELIVER_TWICE). Records kill → replacement attempt latency from the side effects.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Kill, latencySummary, replacementLatencies } from "../invariants.js";
import { Submitter } from "../load.js";
import { freePort, heldTasks, type Proc, startJoiner, startStandalone } from "../processes.js";
import { finishRuns, type Scenario, setUpLoad, tearDown } from "../scenario.js";

const WORKERS = 3;
const CONCURRENCY = 4;

/** The worker-kill scenario, with or without duplicate deliveries. */
export function workerKills(deliverTwice: boolean): Scenario {
  return async (ctx) => {
    const env: Record<string, string> = deliverTwice ? { SHOAL_TEST_DELIVER_TWICE: "true" } : {};
    const port = await freePort();
    const sa = await startStandalone({ dataDir: ctx.dir, port, workers: 0, env });
    const base = () => sa.url;
    const worker = () =>
      startJoiner("worker", ctx.dir, ["--concurrency", String(CONCURRENCY)], env);
    const workers: Proc[] = Array.from({ length: WORKERS }, worker);
    const { names, dags, effectsFile } = await setUpLoad(ctx, sa.url);
    const submitter = Submitter.start(ctx, base, names);
    const kills: Kill[] = [];
    const end = Date.now() + ctx.faultMs;
    while (Date.now() < end) {
      await sleep(ctx.rng.between(2000, 5000));
      const i = ctx.rng.int(0, workers.length - 1);
      const victim = workers[i] as Proc;
      const held = heldTasks(victim.pid);
      const at = Date.now();
      await victim.kill9();
      kills.push({ at, held });
      ctx.log(
        `kill -9 worker ${victim.pid} at ${new Date(at).toISOString()} holding ${held.length} attempts`,
      );
      workers[i] = worker();
    }
    const done = await finishRuns(ctx, base, submitter, dags, effectsFile);
    const { latencies, unreplaced } = replacementLatencies(kills, done.effects);
    const orphans = await tearDown(ctx.dir);
    const held = kills.reduce((n, k) => n + k.held.length, 0);
    return {
      name: ctx.name,
      figures: done.figures,
      load: done.load,
      faults: `${kills.length} worker kills (${held} running attempts); kill→replacement p50/p99/max ${latencySummary(latencies)}${deliverTwice ? "; every message delivered twice" : ""}`,
      checks: [...done.checks, orphans],
      notes: [
        `kill → replacement attempt (p50/p99/max): ${latencySummary(latencies)} over ${latencies.length} attempts${unreplaced.length ? `; ${unreplaced.length} never replaced: ${unreplaced.slice(0, 3).join("; ")}` : ""}`,
        `double executions: ${done.figures.doubleExecutions} (max overlap ${done.figures.maxOverlapMs} ms)`,
      ],
    };
  };
}

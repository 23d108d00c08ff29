/**
 * Scenario 2: `kill -9` of the whole `shoal standalone` (its process group: API, dispatcher,
 * emulators, built-in worker) at random moments, half of them right after a 202, and a restart on
 * the same data dir and port. Two `shoal worker` processes and a `shoal sweeper` keep running
 * through it. Records the recovery time (kill → `/v1/health` 200 again).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { latencySummary } from "../invariants.js";
import { health, Submitter, waitHealthy } from "../load.js";
import { freePort, type Standalone, startJoiner, startStandalone } from "../processes.js";
import { finishRuns, type Scenario, setUpLoad, tearDown } from "../scenario.js";

export const controlPlane: Scenario = async (ctx) => {
  const port = await freePort();
  const start = () => startStandalone({ dataDir: ctx.dir, port, workers: 4 });
  let sa: Standalone = await start();
  const base = () => sa.url;
  startJoiner("worker", ctx.dir, ["--concurrency", "4"]);
  startJoiner("worker", ctx.dir, ["--concurrency", "4"]);
  startJoiner("sweeper", ctx.dir, ["--interval", "1000"]);
  const { names, dags, effectsFile } = await setUpLoad(ctx, sa.url);
  let killAfter202 = false;
  let restarting: Promise<void> | undefined;
  const recoveries: number[] = [];
  let kills = 0;
  let after202 = 0;
  const killAndRestart = async () => {
    const at = Date.now();
    await sa.kill9();
    kills++;
    sa = await start();
    const ms = await waitHealthy(sa.url, 60_000);
    recoveries.push(ms === undefined ? Number.POSITIVE_INFINITY : Date.now() - at);
    ctx.log(
      `standalone kill -9 #${kills} at ${new Date(at).toISOString()}: healthy again after ${Date.now() - at} ms`,
    );
  };
  const submitter = Submitter.start(ctx, base, names, async () => {
    if (!killAfter202) return;
    killAfter202 = false;
    after202++;
    restarting = killAndRestart();
    await restarting;
  });
  const end = Date.now() + ctx.faultMs;
  while (Date.now() < end) {
    await sleep(ctx.rng.between(4000, 9000));
    if (ctx.rng.next() < 0.5) {
      killAfter202 = true;
      // The submitter kills at its next 202 (within 10 s, else we kill); wait for that restart.
      const deadline = Date.now() + 10_000;
      while (killAfter202 && Date.now() < deadline) await sleep(50);
      if (killAfter202) {
        killAfter202 = false;
        await killAndRestart();
      } else await restarting;
      restarting = undefined;
    } else await killAndRestart();
  }
  const done = await finishRuns(ctx, base, submitter, dags, effectsFile);
  const finalHealth = await health(sa.url);
  const orphans = await tearDown(ctx.dir);
  const recovered = recoveries.filter(Number.isFinite);
  return {
    name: ctx.name,
    figures: done.figures,
    load: done.load,
    faults: `${kills} standalone kills (${after202} right after a 202); recovery p50/p99/max ${latencySummary(recovered)}`,
    checks: [
      ...done.checks,
      {
        name: "healthy after each restart",
        ok: recovered.length === recoveries.length && finalHealth.status === 200,
        detail: `${recovered.length}/${recoveries.length} restarts healthy within 60 s; final health ${finalHealth.status}`,
      },
      orphans,
    ],
    notes: [
      `recovery after kill -9 (kill → health 200), p50/p99/max: ${latencySummary(recovered)}`,
    ],
  };
};

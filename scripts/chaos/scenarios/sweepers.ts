/**
 * Scenario 5: schedules with no scheduler in standalone (`--no-scheduler`) and three
 * `shoal sweeper` processes over two every-second cron schedules (FIRE_ALL); single sweepers are
 * killed and restarted, and once all of them at the same time. Every nominal time must fire
 * exactly once (the fire ledger and the instances by schedule time), and every run finish.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Check, checkFires, type Fire, latencySummary } from "../invariants.js";
import { call, createSecondlySchedule, definitionOf, listAll, putWorkflows } from "../load.js";
import { freePort, type Proc, startJoiner, startStandalone } from "../processes.js";
import { checkRunsOf, type Scenario, tearDown } from "../scenario.js";

const SWEEPERS = 3;

/** Seconds the fire ledgers have, once faults stopped, to reach the time they stopped. */
const CATCH_UP_S = 30;

/**
 * Polls a schedule's fire ledger until it holds the nominal time `t` (rounded down to the
 * second), for up to {@link CATCH_UP_S}; resolves with the time it had to reach.
 */
async function catchUp(base: string, id: string, t: number): Promise<number> {
  const target = Math.floor(t / 1000) * 1000;
  const from = new Date(target).toISOString();
  const deadline = Date.now() + CATCH_UP_S * 1000;
  while (Date.now() < deadline) {
    const r = await call(base, "GET", `/v1/schedules/${id}/fires?from=${from}&limit=1`);
    if (r.status === 200 && (r.body?.items?.length ?? 0) > 0) break;
    await sleep(500);
  }
  return target;
}

export const sweepers: Scenario = async (ctx) => {
  const port = await freePort();
  const sa = await startStandalone({
    dataDir: ctx.dir,
    port,
    workers: 4,
    args: ["--no-scheduler"],
  });
  const base = () => sa.url;
  const sweeper = () => startJoiner("sweeper", ctx.dir, ["--interval", "1000"]);
  const procs: Proc[] = Array.from({ length: SWEEPERS }, sweeper);
  const effectsFile = join(ctx.dir, "side-effects.log");
  writeFileSync(effectsFile, "", { flag: "a" });
  const dag = { a: [], b: ["a"] };
  const workflows = [`chaos-${ctx.name}-tick1`, `chaos-${ctx.name}-tick2`];
  await putWorkflows(
    sa.url,
    workflows.map((name) => ({ name, body: definitionOf({ name, dag }, effectsFile, ctx.rng) })),
  );
  const schedules: Array<{ id: string; workflow: string; first: number; offlineAt?: number }> = [];
  for (const workflow of workflows) {
    const s = await createSecondlySchedule(sa.url, workflow);
    schedules.push({ id: s.id, workflow, first: Date.parse(s.nextFireTime) });
  }

  let single = 0;
  let total = 0;
  const end = Date.now() + ctx.faultMs;
  const t0 = Date.now();
  while (Date.now() < end) {
    await sleep(ctx.rng.between(2000, 5000));
    if (total === 0 && Date.now() - t0 > ctx.faultMs / 2) {
      await Promise.all(procs.map((p) => p.kill9()));
      total++;
      const down = ctx.rng.between(3000, 5000);
      ctx.log(`kill -9 of all ${procs.length} sweepers, down for ${Math.round(down)} ms`);
      await sleep(down);
      for (let i = 0; i < procs.length; i++) procs[i] = sweeper();
    } else {
      const i = ctx.rng.int(0, procs.length - 1);
      await (procs[i] as Proc).kill9();
      single++;
      await sleep(ctx.rng.between(500, 2000));
      procs[i] = sweeper();
    }
  }
  // Faults stop. The ledger must catch up with the present (the restarted sweepers start, take
  // the shards over and fire what they missed) within CATCH_UP_S; then the fires stop.
  const stoppedAt = Date.now();
  const caughtUp = await Promise.all(schedules.map((s) => catchUp(sa.url, s.id, stoppedAt)));
  const catchUpMs = Date.now() - stoppedAt;
  ctx.log(`ledgers caught up with the time faults stopped after ${catchUpMs} ms`);
  for (const s of schedules) await call(sa.url, "POST", `/v1/schedules/${s.id}/offline`);
  await sleep(3000);

  const checks: Check[] = [];
  const ids = new Set<string>();
  const fireChecks: Check[] = [];
  const lateness: number[] = [];
  for (const s of schedules) {
    const fires = (await listAll(sa.url, `/v1/schedules/${s.id}/fires`)) as Array<
      Fire & { latenessMs?: number }
    >;
    const listed = (await listAll(sa.url, `/v1/instances?workflow=${s.workflow}`)) as Array<{
      instanceId: string;
      scheduleTime?: string;
    }>;
    for (const i of listed) ids.add(i.instanceId);
    for (const f of fires) {
      if (f.instanceId) ids.add(f.instanceId);
      if (f.decision === "FIRED" && f.latenessMs !== undefined) lateness.push(f.latenessMs);
    }
    const { check } = checkFires(
      s.workflow,
      fires,
      1000,
      listed.flatMap((i) => (i.scheduleTime ? [i.scheduleTime] : [])),
      new Set(listed.map((i) => i.instanceId)),
      // Due 2 s before it went offline, a time must be in the ledger (sweeps are 1 s apart).
      { from: s.first, to: caughtUp[schedules.indexOf(s)] ?? Date.now() },
    );
    fireChecks.push(check);
  }
  const runs = await checkRunsOf(
    ctx,
    base,
    [...ids],
    Object.fromEntries(workflows.map((w) => [w, dag])),
    effectsFile,
  );
  checks.push(...runs.checks, ...fireChecks);
  const orphans = await tearDown(ctx.dir);
  return {
    name: ctx.name,
    figures: runs.figures,
    load: `2 every-second schedules; ${runs.load}`,
    faults: `${single} single sweeper kills, ${total} kill of all ${SWEEPERS}`,
    checks: [...checks, orphans],
    notes: [
      `fire lateness (p50/p99/max): ${latencySummary(lateness)}`,
      `ledgers reached the time faults stopped ${(catchUpMs / 1000).toFixed(1)} s after`,
    ],
  };
};

/**
 * What every scenario shares: its context (seeded randomness, its own directory, its fault
 * budget), its result (a row of the table), the load set-up, and the end of a scenario: settle
 * the submissions, give the runs the stated bound to finish, read the side effects, check the
 * invariants, tear the processes down and look for orphans.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type Check,
  checkRuns,
  type Effect,
  FINAL_STATES,
  type InstanceView,
  parseEffects,
  type RunFigures,
} from "./invariants.js";
import {
  call,
  type Dag,
  definitionOf,
  loadWorkflows,
  putWorkflows,
  type Submitter,
} from "./load.js";
import { killAll, sweepOrphans } from "./processes.js";
import type { Random } from "./random.js";

/** What a scenario is given. */
export interface ScenarioContext {
  name: string;
  rng: Random;
  /** Its own directory: data dir, side-effect file, process logs. */
  dir: string;
  /** How long faults are injected, ms. */
  faultMs: number;
  /** Seconds every instance has to reach a final state once the faults stopped. */
  boundS: number;
  log(message: string): void;
}

/** A row of the table, with the checks behind it. */
export interface ScenarioResult {
  name: string;
  load: string;
  faults: string;
  checks: Check[];
  /** Other figures worth a line (latencies, recovery times). */
  notes: string[];
  /** The figures of its runs, when it ran any. */
  figures?: RunFigures;
  durationMs: number;
}

/** A scenario: sets up its processes, injects its faults for `ctx.faultMs`, checks. */
export type Scenario = (ctx: ScenarioContext) => Promise<Omit<ScenarioResult, "durationMs">>;

/** The lease renewal period of standalone (1 s) plus time to notice and kill the task. */
export const OVERLAP_WINDOW_MS = 3_000;

/** The load's workflows, PUT on `base`; their tasks append to `<dir>/side-effects.log`. */
export async function setUpLoad(
  ctx: ScenarioContext,
  base: string,
): Promise<{ names: string[]; dags: Record<string, Dag>; effectsFile: string }> {
  const effectsFile = join(ctx.dir, "side-effects.log");
  writeFileSync(effectsFile, "", { flag: "a" });
  const workflows = loadWorkflows(ctx.rng, `chaos-${ctx.name}`);
  await putWorkflows(
    base,
    workflows.map((w) => ({ name: w.name, body: definitionOf(w, effectsFile, ctx.rng) })),
  );
  return {
    names: workflows.map((w) => w.name),
    dags: Object.fromEntries(workflows.map((w) => [w.name, w.dag])),
    effectsFile,
  };
}

/** Reads an instance; undefined while the API does not answer it. */
export async function readInstance(base: string, id: string): Promise<InstanceView | undefined> {
  const r = await call(base, "GET", `/v1/instances/${id}`);
  if (r.status !== 200) return undefined;
  return {
    instanceId: id,
    workflow: r.body.workflow,
    state: r.body.state,
    tasks: (r.body.tasks ?? []).map((t: InstanceView["tasks"][number]) => ({
      code: t.code,
      state: t.state,
      attempt: t.attempt,
    })),
  };
}

/**
 * Waits until every instance of `ids` is final or `boundS` passed (polling each unfinished one
 * about once a second), and returns their last views and how long it took.
 */
export async function waitFinal(
  base: () => string,
  ids: string[],
  boundS: number,
): Promise<{ instances: InstanceView[]; tookMs: number }> {
  const t0 = Date.now();
  const views = new Map<string, InstanceView>();
  for (;;) {
    const open = ids.filter((id) => !FINAL_STATES.includes(views.get(id)?.state ?? ""));
    if (open.length === 0 || Date.now() - t0 > boundS * 1000) break;
    for (const id of open) {
      const v = await readInstance(base(), id);
      if (v) views.set(id, v);
    }
    if (ids.some((id) => !FINAL_STATES.includes(views.get(id)?.state ?? ""))) await sleep(1000);
  }
  return {
    instances: ids.map(
      (id) => views.get(id) ?? { instanceId: id, workflow: "?", state: "UNREADABLE", tasks: [] },
    ),
    tookMs: Date.now() - t0,
  };
}

/** What {@link checkRunsOf} and {@link finishRuns} found. */
export interface RunsChecked {
  checks: Check[];
  figures: RunFigures;
  /** The table's load cell. */
  load: string;
  drainMs: number;
  effects: Effect[];
}

/**
 * Gives the instances `ids` `ctx.boundS` to finish, then checks the invariants over the API and
 * the side-effect file.
 */
export async function checkRunsOf(
  ctx: ScenarioContext,
  base: () => string,
  ids: string[],
  dags: Record<string, Dag>,
  effectsFile: string,
): Promise<RunsChecked> {
  ctx.log(`${ids.length} runs; waiting up to ${ctx.boundS} s for them to finish`);
  const { instances, tookMs } = await waitFinal(base, ids, ctx.boundS);
  const { effects, malformed } = parseEffects(readFileSync(effectsFile, "utf8"));
  const { checks, figures } = checkRuns({
    instances,
    dags,
    effects,
    boundS: ctx.boundS,
    overlapWindowMs: OVERLAP_WINDOW_MS,
  });
  if (malformed.length > 0)
    checks.push({
      name: "side-effect lines well formed",
      ok: false,
      detail: `${malformed.length} malformed lines`,
      evidence: malformed.slice(0, 3),
    });
  return {
    checks,
    figures,
    effects,
    drainMs: tookMs,
    load: `${figures.instances} runs (${figures.success} ok), ${figures.attempts} attempts, ${figures.failovers} failovers; drained in ${(tookMs / 1000).toFixed(1)} s; longest silence ${(figures.maxIdle.ms / 1000).toFixed(1)} s`,
  };
}

/**
 * The end of a load scenario, once its faults stopped: the submitter stops and asks again for
 * runs that got no 202 (up to 30 s), then {@link checkRunsOf} the accepted runs.
 */
export async function finishRuns(
  ctx: ScenarioContext,
  base: () => string,
  submitter: Submitter,
  dags: Record<string, Dag>,
  effectsFile: string,
): Promise<RunsChecked> {
  await submitter.stop();
  await submitter.settle(30_000);
  const lost = submitter.pending();
  const ids = submitter.runs.flatMap((r) => (r.instanceId ? [r.instanceId] : []));
  const done = await checkRunsOf(ctx, base, ids, dags, effectsFile);
  done.checks.unshift({
    name: "every run accepted",
    ok: lost.length === 0,
    detail: `${submitter.runs.length - lost.length}/${submitter.runs.length} accepted (${submitter.refused} POSTs without a 202, asked again)`,
    evidence: lost.slice(0, 5).map((r) => `no 202 for ${r.key}`),
  });
  return done;
}

/**
 * Kills every process the harness started (their process groups), waits for task watchers to
 * act, and kills what is still running under `dir`: an orphan check.
 */
export async function tearDown(dir: string): Promise<Check> {
  await killAll();
  await sleep(2_000);
  const orphans = sweepOrphans(dir);
  return {
    name: "no orphan processes",
    ok: orphans.length === 0,
    detail: `${orphans.length} left after the process groups were killed`,
    evidence: orphans.slice(0, 5).map((p) => `${p.pid}: ${p.cmdline.slice(0, 160)}`),
  };
}

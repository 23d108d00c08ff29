/**
 * Scenario: a trigger storm (docs/events.md "Trigger loops and storms"). Three triggers:
 * `broad` matches every event (`{"source": [{"prefix": ""}]}`, which must never see Shoal's own),
 * `loop` starts its workflow on any state change of itself (asked for: the loop limits must cut
 * it off), `chain` starts once per SUCCESS of `broad`'s workflow. Meanwhile clients put matching
 * events as fast as standalone takes them (refused past its rate, or with 503 past its bound),
 * the health endpoint and the trigger list are timed every 250 ms, and at the end standalone gets
 * SIGTERM in the middle of it all and must exit within its 5 s grace; a restart with
 * `--no-triggers` must answer at once, every trigger OFFLINE, and the runs accepted finish.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Check, FINAL_STATES, latencySummary } from "../invariants.js";
import { call, listAll } from "../load.js";
import { freePort, type Standalone, startStandalone } from "../processes.js";
import { type Scenario, tearDown, waitFinal } from "../scenario.js";

const CLIENTS = 8;
const ONE_TASK = { tasks: [{ code: "t", type: "SHELL", command: "echo storm" }] };
/** The default limits (SHOAL_TRIGGER_MAX_*): the checks hold them. */
const MAX_RUNS_PER_EVENT = 100;
const MAX_RUNS_PER_MINUTE = 60;

/** `GET path`'s latency, ms (Infinity: no answer within 1 s). */
async function latency(base: string, path: string): Promise<number> {
  const t0 = performance.now();
  const r = await call(base, "GET", path, undefined, 1_000);
  return r.status === 200 ? performance.now() - t0 : Number.POSITIVE_INFINITY;
}

export const triggerStorm: Scenario = async (ctx) => {
  const port = await freePort();
  let sa: Standalone = await startStandalone({ dataDir: ctx.dir, port, workers: 4 });
  const base = sa.url;
  const w = (n: string) => `chaos-${ctx.name}-${n}`;
  for (const n of ["broad", "loop", "chain"]) {
    await call(base, "PUT", `/v1/workflows/${w(n)}`, ONE_TASK);
  }
  const trigger = async (workflow: string, eventPattern: object) =>
    (await call(base, "POST", "/v1/triggers", { workflow, eventPattern })).body?.id as string;
  const ids = {
    broad: await trigger(w("broad"), { source: [{ prefix: "" }] }),
    loop: await trigger(w("loop"), { source: ["shoal"], detail: { workflow: [w("loop")] } }),
    chain: await trigger(w("chain"), {
      source: ["shoal"],
      "detail-type": ["Shoal Workflow Instance State Change"],
      detail: { workflow: [w("broad")], state: ["SUCCESS"] },
    }),
  };
  const loopStart = (await call(base, "POST", `/v1/workflows/${w("loop")}/runs`, {})).body
    ?.instanceId as string;

  // The storm: clients put events until the fault time is up; every started run is recorded.
  const started = new Set<string>();
  let sent = 0;
  let refusedRate = 0;
  let overloaded = 0;
  const end = Date.now() + ctx.faultMs;
  const client = async (c: number) => {
    for (let i = 0; Date.now() < end; i++) {
      const r = await call(base, "POST", "/v1/events", {
        Entries: [
          {
            Source: "com.example.chaos",
            DetailType: "Tick",
            Detail: JSON.stringify({ client: c, n: i, pick: ctx.rng.between(0, 1000) }),
          },
        ],
      });
      if (r.status === 503) {
        overloaded++;
        await sleep(100);
        continue;
      }
      sent++;
      for (const t of r.body?.Entries?.[0]?.Triggers ?? []) {
        if (t.instanceId) started.add(t.instanceId);
        else if (String(t.skipped).startsWith("rate limited")) refusedRate++;
      }
    }
  };
  const healthMs: number[] = [];
  const listMs: number[] = [];
  const probe = async () => {
    while (Date.now() < end) {
      healthMs.push(await latency(base, "/v1/health"));
      listMs.push(await latency(base, "/v1/triggers"));
      await sleep(250);
    }
  };
  await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), probe()]);
  ctx.log(`${sent} events put (${overloaded} answered 503), ${started.size} runs started`);

  // SIGTERM in the middle of it: the loop still runs and the broad runs finish.
  const t0 = Date.now();
  sa.proc.kill("SIGTERM");
  await Promise.race([sa.exited, sleep(10_000)]);
  const stopMs = Date.now() - t0;
  if (sa.alive()) await sa.kill9();
  sa = await startStandalone({ dataDir: ctx.dir, port, workers: 4, args: ["--no-triggers"] });
  const firstHealthMs = await latency(sa.url, "/v1/health");
  const triggers = (await listAll(sa.url, "/v1/triggers")) as Array<{
    id: string;
    state: string;
    refusedRuns: number;
    loopStops: number;
  }>;
  const byId = new Map(triggers.map((t) => [t.id, t]));
  const runsOf = async (name: string) =>
    (
      (await listAll(sa.url, `/v1/instances?workflow=${w(name)}`)) as Array<{
        instanceId: string;
      }>
    ).map((i) => i.instanceId);
  // Every accepted run reaches a final state within the bound.
  const accepted = [...started, loopStart];
  const { instances } = await waitFinal(() => sa.url, accepted, ctx.boundS);
  const unfinished = instances.filter((i) => !FINAL_STATES.includes(i.state));
  const broadRuns = await runsOf("broad");
  const loopRuns = await runsOf("loop");
  const chainRuns = await runsOf("chain");
  const orphans = await tearDown(ctx.dir);
  const worst = (xs: number[]) => Math.max(0, ...xs);
  const checks: Check[] = [
    {
      name: "API answers within 1 s during the storm",
      ok: worst(healthMs) < 1_000 && worst(listMs) < 1_000,
      detail: `health p50/p99/max ${latencySummary(healthMs.filter(Number.isFinite))} over ${healthMs.length} probes; trigger list max ${(worst(listMs) / 1000).toFixed(2)} s`,
    },
    {
      name: "the broad trigger sees no Shoal event",
      ok: broadRuns.length <= sent && broadRuns.every((id) => started.has(id)),
      detail: `${broadRuns.length} runs of the broad workflow, all started by outside events`,
    },
    {
      name: "a trigger starts at most its rate; refusals counted",
      ok:
        broadRuns.length <= MAX_RUNS_PER_MINUTE * Math.ceil(ctx.faultMs / 60_000 + 1) &&
        (byId.get(ids.broad)?.refusedRuns ?? 0) >= refusedRate,
      detail: `${broadRuns.length} runs, ${refusedRate} refused in answers, ${byId.get(ids.broad)?.refusedRuns} on the trigger`,
    },
    {
      // Whichever limit comes first: the rate (60 a minute) or the runs per originating event.
      name: "the asked-for loop is cut off",
      ok:
        loopRuns.length <= MAX_RUNS_PER_EVENT + 1 &&
        (byId.get(ids.loop)?.loopStops ?? 0) + (byId.get(ids.loop)?.refusedRuns ?? 0) > 0,
      detail: `${loopRuns.length} runs of the loop (at most ${MAX_RUNS_PER_EVENT} + 1); ${byId.get(ids.loop)?.loopStops} loop stops, ${byId.get(ids.loop)?.refusedRuns} refused over the rate`,
    },
    {
      name: "chaining runs at most once per upstream run",
      ok: chainRuns.length <= broadRuns.length,
      detail: `${chainRuns.length} chained runs for ${broadRuns.length} upstream runs`,
    },
    {
      name: "SIGTERM stops it within 5 s",
      ok: stopMs < 5_000,
      detail: `stopped in ${(stopMs / 1000).toFixed(1)} s`,
    },
    {
      name: "--no-triggers restart answers at once, every trigger OFFLINE",
      ok: firstHealthMs < 1_000 && triggers.every((t) => t.state === "OFFLINE"),
      detail: `health after the restart in ${Math.round(firstHealthMs)} ms; ${triggers.filter((t) => t.state === "OFFLINE").length}/${triggers.length} OFFLINE`,
    },
    {
      name: "every accepted run finished",
      ok: unfinished.length === 0,
      detail: `${accepted.length - unfinished.length}/${accepted.length} final within ${ctx.boundS} s`,
      evidence: unfinished.slice(0, 5).map((i) => `${i.instanceId} ${i.state}`),
    },
    orphans,
  ];
  return {
    name: ctx.name,
    load: `${sent} events from ${CLIENTS} clients (${overloaded} answered 503), ${started.size} runs started, loop ${loopRuns.length} runs`,
    faults: `event storm ${Math.round(ctx.faultMs / 1000)} s, a self-loop, SIGTERM mid-storm, restart --no-triggers`,
    checks,
    notes: [
      `health during the storm p50/p99/max: ${latencySummary(healthMs.filter(Number.isFinite))}`,
    ],
  };
};

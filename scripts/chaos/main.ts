/**
 * `npm run chaos`: fault injection against real Shoal processes on this machine (loopback only),
 * bounded in time, seeded, stopping by itself. Each scenario gets its own data dir and
 * processes, injects its faults for its share of the budget, lets the runs finish within a
 * stated bound, checks the invariants of docs/reliability.md and tears everything down. Prints
 * a table (scenario → load → faults → invariants → result) and exits 0 only when every
 * invariant held.
 *
 *   npm run chaos -- [--seed N] [--minutes M] [--profile short|long] [--scenario a,b] [--keep]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { killAll, killAllNow, sweepOrphans } from "./processes.js";
import { seededRandom } from "./random.js";
import type { Scenario, ScenarioResult } from "./scenario.js";
import { children } from "./scenarios/children.js";
import { controlPlane } from "./scenarios/control-plane.js";
import { diskFull } from "./scenarios/disk-full.js";
import { storage } from "./scenarios/storage.js";
import { sweepers } from "./scenarios/sweepers.js";
import { triggerStorm } from "./scenarios/trigger-storm.js";
import { workerKills } from "./scenarios/workers.js";
import { formatDetails, formatTable, passed } from "./table.js";

/** The scenarios, in the order they run. */
const SCENARIOS: Record<string, Scenario> = {
  workers: workerKills(false),
  "control-plane": controlPlane,
  children,
  storage,
  "disk-full": diskFull,
  sweepers,
  duplicates: workerKills(true),
  "trigger-storm": triggerStorm,
};

/** Total minutes of each profile (faults take about half; start-up and draining the rest). */
const PROFILES: Record<string, number> = { short: 2, long: 20 };

/** Seconds every instance has to reach a final state once the faults stopped. */
const BOUND_S = 60;

const USAGE =
  "usage: npm run chaos -- [--seed N] [--minutes M] [--profile short|long] [--scenario name,...] [--keep]";

function options() {
  const { values } = parseArgs({
    options: {
      seed: { type: "string" },
      minutes: { type: "string" },
      profile: { type: "string", default: "short" },
      scenario: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(`${USAGE}\nscenarios: ${Object.keys(SCENARIOS).join(", ")}`);
    process.exit(0);
  }
  const fail = (msg: string): never => {
    console.error(`chaos: ${msg}\n${USAGE}`);
    process.exit(2);
  };
  const profileMinutes = PROFILES[values.profile] ?? fail(`unknown profile '${values.profile}'`);
  const minutes = values.minutes === undefined ? profileMinutes : Number(values.minutes);
  if (!Number.isFinite(minutes) || minutes <= 0) fail(`--minutes must be a positive number`);
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  if (!Number.isInteger(seed)) fail(`--seed must be an integer`);
  const names = values.scenario
    ? values.scenario.split(",").map((s) => s.trim())
    : Object.keys(SCENARIOS);
  for (const n of names)
    if (!SCENARIOS[n]) fail(`unknown scenario '${n}' (${Object.keys(SCENARIOS).join(", ")})`);
  const profile = values.minutes === undefined ? `profile ${values.profile}` : "--minutes";
  return { seed, minutes, names, keep: values.keep, profile };
}

/** A seed of its own per scenario, so that running one alone makes the same choices. */
function scenarioSeed(seed: number, name: string): number {
  let h = seed >>> 0;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 0x9e3779b1) >>> 0;
  return h;
}

async function main(): Promise<number> {
  const o = options();
  const root = mkdtempSync(join(tmpdir(), `shoal-chaos-${o.seed}-`));
  /** Ends every process; removes the run's directory unless kept (`--keep`, or a failure). */
  const cleanUp = (keep: boolean) => {
    killAllNow();
    sweepOrphans(root);
    if (!keep) rmSync(root, { recursive: true, force: true });
  };
  process.on("exit", () => killAllNow());
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      console.error(`chaos: ${signal}: killing every process started`);
      cleanUp(o.keep);
      process.exit(130);
    });
  // Faults take half of each scenario's share; start-up, draining and checks the rest.
  const faultMs = Math.max(10_000, Math.round(((o.minutes * 60_000) / o.names.length) * 0.5));
  console.log(
    `chaos: seed ${o.seed}, ${o.minutes} min (${o.profile}), scenarios ${o.names.join(", ")}; faults ${Math.round(faultMs / 1000)} s each; runs must finish within ${BOUND_S} s after; data in ${root}`,
  );
  console.log(
    `chaos: reproduce with npm run chaos -- --seed ${o.seed} --minutes ${o.minutes}${o.names.length < Object.keys(SCENARIOS).length ? ` --scenario ${o.names.join(",")}` : ""}; one scenario alone with the same fault time: --seed ${o.seed} --scenario NAME --minutes ${((faultMs * 2) / 60_000).toFixed(2)}`,
  );
  const results: ScenarioResult[] = [];
  for (const name of o.names) {
    const scenario = SCENARIOS[name] as Scenario;
    const dir = join(root, name);
    const t0 = Date.now();
    const log = (m: string) =>
      console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${name}: ${m}`);
    log("start");
    try {
      const r = await scenario({
        name,
        rng: seededRandom(scenarioSeed(o.seed, name)),
        dir,
        faultMs,
        boundS: BOUND_S,
        log,
      });
      results.push({ ...r, durationMs: Date.now() - t0 });
    } catch (e) {
      await killAll();
      sweepOrphans(dir);
      results.push({
        name,
        load: "-",
        faults: "-",
        checks: [
          {
            name: "scenario ran",
            ok: false,
            detail: String((e as Error)?.stack ?? e).slice(0, 1500),
          },
        ],
        notes: [],
        durationMs: Date.now() - t0,
      });
    }
    log(passed(results.at(-1) as ScenarioResult) ? "PASS" : "FAIL");
  }
  console.log(`\nchaos: seed ${o.seed}\n`);
  console.log(formatTable(results));
  console.log(`\n${formatDetails(results)}`);
  const ok = results.every(passed);
  // A failure's evidence (side effects, process logs, data) stays for whoever reads the report.
  cleanUp(o.keep || !ok);
  if (o.keep || !ok)
    console.log(`\nchaos: data, side-effect files and process logs kept in ${root}`);
  console.log(`\nchaos: ${ok ? "PASS" : "FAIL"} (seed ${o.seed})`);
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    killAllNow();
    process.exit(1);
  },
);

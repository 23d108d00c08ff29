/**
 * Shoal benchmarks against `shoal standalone` started in this process (docs/performance.md).
 *
 *   npm run bench                      every scenario; start, hop, throughput, makespan (and
 *                                      schedules) once per standalone backend, then side by side
 *   npm run bench -- hop               one (or more) of: start hop throughput makespan emulators
 *   npm run bench -- hop --backend=embedded   one backend only (embedded, emulators)
 *   npm run bench -- cost              $ per 1M tasks on AWS (docs/cost.md)
 *   npm run bench -- aws-sim [--aws-sim-full] [--aws-sim-fanout=N] [--aws-sim-worker-slots=N]
 *                            [--aws-sim-worker-batch=N] [--aws-sim-real-tasks]
 *                            [--aws-sim-only=makespan,fanout,fanout-wide,dispatcher,schedules]
 *                                      AWS latency by simulation (docs/aws-simulation.md)
 *   npm run bench -- throughput --workers=16       worker slots (throughput: a list, 8,16,32)
 *   npm run bench -- hop --profile     also take a CPU profile of the run window
 *   npm run bench -- throughput --external-workers=1   slots in separate `shoal worker` process(es)
 *   npm run bench -- schedules --schedules=100000 --sweepers=1,2   schedule firing (only when
 *                                      named: it runs for minutes; default 20,000 schedules, sweepers 1,2)
 *   npm run bench -- load --runs=1000 --minutes=1 [--rate=R]   load without loss (only when named:
 *                                      default a 10,000-run burst, then 10 minutes at 80 % of its rate)
 *   npm run bench -- console --runs=3  the web console's load times and bundle size in headless
 *                                      Chromium (only when named; needs a built console and Chromium)
 *
 * Prints tables and writes every figure as JSON to <os.tmpdir()>/shoal-bench/latest.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { BACKEND_KINDS, type BackendKind } from "../lib/standalone/defaults.js";
import type { AwsSimOptions } from "./aws-sim.js";
import { setBenchBackend } from "./backend.js";
import { cost } from "./cost.js";
import { emulators } from "./emulators.js";
import { hop } from "./hop.js";
import { load } from "./load.js";
import { makespan } from "./makespan.js";
import type { ScenarioOptions, ScenarioResult } from "./scenario.js";
import { schedules } from "./schedules.js";
import { sideBySide } from "./side-by-side.js";
import { start } from "./start.js";
import { throughput } from "./throughput.js";

const SCENARIOS: Record<string, (o: ScenarioOptions) => Promise<ScenarioResult>> = {
  start,
  hop,
  throughput,
  makespan,
  emulators,
  // Dollars per million tasks, on the embedded backend (it reports DynamoDB's units exactly).
  cost,
  schedules,
  load,
  // AWS latency by simulation (docs/aws-simulation.md); loaded when run.
  "aws-sim": async (o) => (await import("./aws-sim.js")).awsSim(o),
  // Loaded when run: it brings playwright-core, which no other scenario needs.
  console: async (o) => (await import("./console.js")).consoleScenario(o),
};
/** Scenarios that run only when named (too long for the default run, or needing Chromium). */
const ON_REQUEST = new Set(["schedules", "load", "console"]);
/** Scenarios that run on each standalone backend (`--backend`); the others run once. */
const PER_BACKEND = new Set(["start", "hop", "throughput", "makespan", "schedules"]);

function parseArgs(argv: string[]): {
  names: string[];
  opts: ScenarioOptions;
  backends: BackendKind[];
} {
  const names: string[] = [];
  const opts: ScenarioOptions = { profile: false };
  let backends: BackendKind[] = [...BACKEND_KINDS];
  for (const a of argv) {
    if (a === "--profile") opts.profile = true;
    else if (a === "--aws-sim-full") (opts as AwsSimOptions).awsSimFull = true;
    else if (a === "--aws-sim-real-tasks") (opts as AwsSimOptions).awsSimRealTasks = true;
    else if (a.startsWith("--aws-sim-only="))
      (opts as AwsSimOptions).awsSimParts = a.slice("--aws-sim-only=".length).split(",");
    else if (/^--aws-sim-(fanout|schedules|seed|worker-slots|worker-batch)=/.test(a)) {
      const [flag, value] = a.slice(2).split("=") as [string, string];
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`--${flag} must be a whole number ≥ 1: '${a}'`);
      const key = {
        "aws-sim-fanout": "awsSimFanout",
        "aws-sim-schedules": "awsSimSchedules",
        "aws-sim-seed": "awsSimSeed",
        "aws-sim-worker-slots": "awsSimWorkerSlots",
        "aws-sim-worker-batch": "awsSimWorkerBatch",
      }[flag] as
        | "awsSimFanout"
        | "awsSimSchedules"
        | "awsSimSeed"
        | "awsSimWorkerSlots"
        | "awsSimWorkerBatch";
      (opts as AwsSimOptions)[key] = n;
    } else if (a.startsWith("--backend=")) {
      const list = a.slice("--backend=".length).split(",");
      const bad = list.filter((b) => !(BACKEND_KINDS as readonly string[]).includes(b));
      if (bad.length || list.length === 0)
        throw new Error(`--backend takes ${BACKEND_KINDS.join(", ")} (comma-separated): '${a}'`);
      backends = list as BackendKind[];
    } else if (a.startsWith("--external-workers="))
      opts.externalProcesses = Number(a.slice("--external-workers=".length)) || undefined;
    else if (a.startsWith("--workers=")) {
      opts.workers = a
        .slice("--workers=".length)
        .split(",")
        .map((x) => Number(x))
        .filter((x) => Number.isInteger(x) && x > 0);
    } else if (a.startsWith("--schedules=")) {
      opts.schedules = Number(a.slice("--schedules=".length));
      if (!Number.isInteger(opts.schedules) || opts.schedules < 1)
        throw new Error(`--schedules must be a whole number ≥ 1: '${a}'`);
    } else if (a.startsWith("--sweepers=")) {
      opts.sweepers = a
        .slice("--sweepers=".length)
        .split(",")
        .map((x) => Number(x))
        .filter((x) => Number.isInteger(x) && x > 0);
    } else if (/^--(runs|minutes|rate)=/.test(a)) {
      const [key, value] = a.slice(2).split("=") as ["runs" | "minutes" | "rate", string];
      opts[key] = Number(value);
      if (!(Number(value) > 0)) throw new Error(`--${key} must be a number > 0: '${a}'`);
    } else if (a in SCENARIOS) names.push(a);
    else
      throw new Error(
        `unknown argument '${a}' (scenarios: ${Object.keys(SCENARIOS).join(", ")}; --backend=embedded,emulators, --workers=N[,N], --profile, --external-workers=N, --schedules=N, --sweepers=N[,N], --runs=N, --minutes=M, --rate=R)`,
      );
  }
  return {
    names: names.length ? names : Object.keys(SCENARIOS).filter((n) => !ON_REQUEST.has(n)),
    opts,
    backends,
  };
}

// fauxqs persists through node:sqlite, which Node 22 flags as experimental (as bin/shoal.js does).
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name === "ExperimentalWarning" && /SQLite/i.test(w.message)) return;
  process.stderr.write(`${w.name}: ${w.message}\n`);
});

async function main(): Promise<void> {
  const { names, opts, backends } = parseArgs(process.argv.slice(2));
  const machine = {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? "?",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
  };
  process.stdout.write(
    `Shoal bench — node ${process.version}, ${machine.cpus} × ${machine.model}, ${machine.memoryGiB} GiB — scenarios: ${names.join(", ")}\n\n`,
  );
  const results: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  const byScenario: Record<string, Partial<Record<BackendKind, Record<string, unknown>>>> = {};
  for (const name of names) {
    for (const backend of PER_BACKEND.has(name) ? backends : [undefined]) {
      const key = backend ? `${name}:${backend}` : name;
      const t = Date.now();
      setBenchBackend(backend ?? "embedded");
      if (backend) process.stdout.write(`-- ${name} on the ${backend} backend\n`);
      try {
        const r = await (SCENARIOS[name] as (o: ScenarioOptions) => Promise<ScenarioResult>)(opts);
        results[key] = r.summary;
        if (backend) {
          const of = byScenario[name] ?? {};
          of[backend] = r.summary;
          byScenario[name] = of;
        }
        process.stdout.write(
          `${r.tables.join("\n\n")}\n(${key}: ${Math.round((Date.now() - t) / 1000)} s)\n\n`,
        );
      } catch (e) {
        errors[key] = String((e as Error)?.stack ?? e);
        process.stdout.write(`${key} FAILED: ${errors[key]}\n\n`);
      }
    }
  }
  const together = sideBySide(byScenario, backends);
  if (together) process.stdout.write(`${together}\n\n`);
  const dir = join(tmpdir(), "shoal-bench");
  mkdirSync(dir, { recursive: true });
  const doc = {
    date: new Date().toISOString(),
    node: process.version,
    machine,
    options: { ...opts, backends },
    results,
    ...(Object.keys(errors).length ? { errors } : {}),
  };
  const file = join(dir, "latest.json");
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(
    join(dir, `bench-${doc.date.replace(/[:.]/g, "-")}.json`),
    `${JSON.stringify(doc, null, 2)}\n`,
  );
  process.stdout.write(`results: ${file}\n`);
  process.exitCode = Object.keys(errors).length ? 1 : 0;
}

main().then(
  // Pollers' sockets and timers may linger for a moment after stop(); do not wait for them.
  () => setTimeout(() => process.exit(), 200).unref(),
  (e) => {
    process.stderr.write(`${String((e as Error)?.stack ?? e)}\n`);
    process.exit(1);
  },
);

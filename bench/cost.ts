/**
 * `npm run bench -- cost`: dollars per million tasks on AWS (us-east-1 list prices,
 * cost-prices.ts) for a 100-task chain, a 1,000-wide fan-out + join, Montage, Epigenomics
 * (WfCommons traces at time scale 0) and a 10,000-task wide DAG; how write units per task grow
 * with the number of tasks, with OUT values, and with task duration (lease renewals); side by
 * side with Step Functions Standard / Express and MWAA's floor. What AWS bills is counted by
 * cost-meter.ts on every client bundle of the run (docs/cost.md has the method). The tasks' own
 * compute is reported apart. The last line is `worst cost per 1M tasks: $X.XX (<shape>)`.
 */
import { convertWfcommons } from "../lib/import/wfcommons.js";
import { benchBackend } from "./backend.js";
import {
  mwaaMonthlyFloor,
  PRICES,
  PRICES_DATE,
  sfnExpressPerMillion,
  sfnStandardPerMillion,
} from "./cost-prices.js";
import {
  agreement,
  dollars,
  fanOuts,
  type Metered,
  meter,
  perTask,
  sum,
  writeUnitsByOperation,
  writeUnitsBySource,
} from "./cost-report.js";
import { type CostRig, runShape, type ShapeRun, startCostRig } from "./cost-run.js";
import { loadTrace, type ScenarioOptions, type ScenarioResult, stamp } from "./scenario.js";
import { round, table } from "./stats.js";

type Task = { code: string; type: "SHELL"; upstream: string[]; command: string };

/** The goal of issue 15: at most this many dollars per million tasks on every shape. */
export const GOAL_USD_PER_MILLION = 2;

const shell = (code: string, upstream: string[], command = "true"): Task => ({
  code,
  type: "SHELL",
  upstream,
  command,
});
const chain = (n: number): Task[] =>
  Array.from({ length: n }, (_, i) => shell(`c${i}`, i ? [`c${i - 1}`] : []));
const wide = (n: number, command = "true"): Task[] =>
  Array.from({ length: n }, (_, i) => shell(`w${i}`, [], command));
const fanJoin = (n: number): Task[] => [
  ...wide(n),
  shell(
    "join",
    wide(n).map((t) => t.code),
  ),
];
const trace = (file: string): Task[] =>
  convertWfcommons(loadTrace(file), { timeScale: 0, source: file }).definition.tasks.map((t) => ({
    ...t,
    command: "true",
  }));
/** Sets one 16-byte OUT parameter (DolphinScheduler's setValue line). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Shoal's setValue syntax, not a template
const OUT_COMMAND = "echo '${setValue(out16=0123456789abcdef)}'";

interface Row {
  run: ShapeRun;
  m: Metered;
  fanOuts: number;
}

const money = (x: number) => `$${x.toFixed(2)}`;

async function measure(rig: CostRig, shape: string, tasks: Task[]): Promise<Row> {
  const safe = shape.replace(/[^A-Za-z0-9_.-]+/g, "-");
  const run = await runShape(rig, shape, `bench-cost-${safe}-${stamp()}`, { tasks });
  process.stderr.write(`cost: ${shape}, ${run.tasks} tasks: ${run.state} in ${run.wallMs} ms\n`);
  return { run, m: meter(run.counts, run.tasks, run.taskMs), fanOuts: fanOuts(tasks) };
}

/** Lease settings of the duration runs, seconds (production defaults: lib/aws/config.ts). */
const SHORT_LEASE = { renew: 1, lease: 3 };
const DEFAULT_RENEW_SECONDS = 15;
/** The two task durations compared, s: what grows between them grows with duration. */
const SLEEP_SECONDS = [6, 12] as const;
/** Tasks of each duration run, all at once on one worker. */
const DURATION_TASKS = 16;

export async function cost(opts: ScenarioOptions): Promise<ScenarioResult> {
  const workers = opts.workers?.[0] ?? 32;
  const main: Row[] = [];
  const growth: Row[] = [];
  const outs: Row[] = [];
  let rig = await startCostRig(workers);
  try {
    main.push(await measure(rig, "chain-100", chain(100)));
    main.push(await measure(rig, "fan-out-1000+join", fanJoin(1000)));
    main.push(await measure(rig, "montage", trace("montage-chameleon-2mass-005d-001.json")));
    main.push(
      await measure(rig, "epigenomics", trace("epigenomics-chameleon-ilmn-6seq-50k-001.json")),
    );
    main.push(await measure(rig, "wide-10000", wide(10_000)));
    growth.push(await measure(rig, "wide-100", wide(100)));
    growth.push(await measure(rig, "wide-1000", wide(1000)));
    growth.push(main[4] as Row);
    outs.push(await measure(rig, "wide-100+OUT", wide(100, OUT_COMMAND)));
    outs.push(await measure(rig, "wide-1000+OUT", wide(1000, OUT_COMMAND)));
  } finally {
    await rig.stop();
  }
  // Tasks that outlive several lease renewals, renewed every second (lease 3 s).
  const durations: Row[] = [];
  rig = await startCostRig(workers, {
    SHOAL_LEASE_RENEW_SECONDS: String(SHORT_LEASE.renew),
    SHOAL_LEASE_SECONDS: String(SHORT_LEASE.lease),
  });
  try {
    const n = DURATION_TASKS;
    durations.push(await measure(rig, `wide-${n} × 0 s`, wide(n)));
    for (const s of SLEEP_SECONDS) {
      durations.push(await measure(rig, `wide-${n} × ${s} s`, wide(n, `sleep ${s}`)));
    }
  } finally {
    await rig.stop();
  }
  return report(main, growth, outs, durations, workers);
}

function report(
  main: Row[],
  growth: Row[],
  outs: Row[],
  durations: Row[],
  workers: number,
): ScenarioResult {
  const mwaa = mwaaMonthlyFloor();
  const priceRows = main.map(({ run, m, fanOuts: f }) => {
    const d = dollars(m);
    const sfn = { tasks: run.tasks, fanOuts: f };
    return [
      run.shape,
      run.tasks,
      run.state,
      money(d.dynamoWrites ?? 0),
      money(d.dynamoReads ?? 0),
      money(d.sqs ?? 0),
      money(d.lambdaRequests ?? 0),
      money(d.lambdaDuration ?? 0),
      money(d.events ?? 0),
      money(d.logs ?? 0),
      money(d.total),
      round(m.taskComputeGbSeconds / run.tasks, 4),
      money(sfnStandardPerMillion(sfn)),
      money(sfnExpressPerMillion(sfn, run.wallMs / 1000)),
    ];
  });
  const drivers = main.map(({ run, m }) => [
    run.shape,
    perTask(m.writeUnits, run.tasks),
    perTask(m.computedIndexWrites, run.tasks),
    perTask(m.failedConditionalWrites, run.tasks),
    perTask(m.readUnits, run.tasks),
    perTask(m.sqsFifoRequests, run.tasks),
    perTask(m.sqsStandardRequests, run.tasks),
    perTask(sum(run.counts, /^sqs\.empty\./), run.tasks),
    perTask(m.dispatcherInvocations, run.tasks),
    perTask(m.workerInvocations, run.tasks),
    round((m.lambdaGbSeconds / run.tasks) * 1000, 1),
    perTask(run.counts["events.task"] ?? 0, run.tasks),
    perTask(run.counts["events.instance"] ?? 0, run.tasks),
    round(m.logBytes / run.tasks, 0),
    perTask(run.counts["logs.files"] ?? 0, run.tasks),
  ]);
  const sources = [
    ...new Set(main.flatMap((r) => Object.keys(writeUnitsBySource(r.run.counts)))),
  ].sort();
  const bySource = sources.map((s) => [
    s,
    ...main.map((r) => perTask(writeUnitsBySource(r.run.counts)[s] ?? 0, r.run.tasks)),
  ]);
  const ops = [
    ...new Set(main.flatMap((r) => Object.keys(writeUnitsByOperation(r.run.counts)))),
  ].sort();
  const byOp = ops.map((o) => [
    o,
    ...main.map((r) => perTask(writeUnitsByOperation(r.run.counts)[o] ?? 0, r.run.tasks)),
    ...main.map((r) => perTask(r.run.counts[`ddb.req.${o}`] ?? 0, r.run.tasks)),
  ]);
  const agree = main.map(({ run, m }) => [
    run.shape,
    m.reported.tableWrites,
    m.computedOkTableWrites,
    agreement(m.reported.tableWrites, m.computedOkTableWrites),
    m.reported.indexWrites,
    m.computedIndexWrites,
    agreement(m.reported.indexWrites, m.computedIndexWrites),
  ]);
  const growthRow = ({ run, m }: Row) => {
    const s = writeUnitsBySource(run.counts);
    const instWrites =
      (run.counts["ddb.req.instances.UpdateItem"] ?? 0) +
      (run.counts["ddb.req.instances.PutItem"] ?? 0);
    const instBytes =
      (run.counts["ddb.bytes.instances.UpdateItem"] ?? 0) +
      (run.counts["ddb.bytes.instances.PutItem"] ?? 0);
    return [
      run.shape,
      run.tasks,
      perTask(m.writeUnits, run.tasks),
      perTask(s.instances ?? 0, run.tasks),
      perTask(s.tasks ?? 0, run.tasks),
      perTask(m.computedIndexWrites, run.tasks),
      instWrites,
      round(instBytes / Math.max(1, instWrites), 0),
      money(dollars(m).total),
    ];
  };
  const growthHeader = [
    "shape",
    "tasks",
    "WRU/task",
    "instances WRU/task",
    "tasks WRU/task",
    "GSI WRU/task",
    "instance writes",
    "mean instance item B",
    "$/1M tasks",
  ];
  const lease = leaseFigures(durations as [Row, Row, Row]);
  const worst = main.reduce((a, b) => (dollars(b.m).total > dollars(a.m).total ? b : a));
  const worstUsd = dollars(worst.m).total;
  const tables = [
    `== cost: $ per 1M tasks on AWS (us-east-1 list prices of ${PRICES_DATE}; tasks' own compute apart), standalone on the ${benchBackend()} backend, ${workers} worker slots, 1 run per shape`,
    table([
      [
        "shape",
        "tasks",
        "state",
        "DynamoDB W",
        "DynamoDB R",
        "SQS",
        "Lambda req",
        "Lambda GB-s",
        "EventBridge",
        "Logs",
        "Shoal $/1M",
        "task compute GB-s/task (apart)",
        "SFN Standard $/1M",
        "SFN Express $/1M",
      ],
      ...priceRows,
    ]),
    `MWAA fixed floor: ${money(mwaa)} a month (mw1.small always on, ${PRICES.mwaaSmallHour.usd} $/h), i.e. ${money(mwaa)} per 1M tasks at 1M tasks a month; Shoal's is per use.`,
    `goal: ≤ ${money(GOAL_USD_PER_MILLION)} per 1M tasks on every shape — ${main.filter((r) => dollars(r.m).total <= GOAL_USD_PER_MILLION).length} of ${main.length} shapes meet it`,
    "drivers per task (WRU: write request units computed from the items; dispatcher/worker: Lambda invocations as the stack batches them, 10 events / 1 task message per invocation; GB-s at 512 MB / 1024 MB)",
    table([
      [
        "shape",
        "WRU",
        "of which GSI",
        "failed cond. WRU",
        "RRU",
        "SQS FIFO req",
        "SQS std req",
        "empty receives",
        "dispatcher inv",
        "worker inv",
        "mGB-s",
        "task events",
        "instance events",
        "log B",
        "log streams",
      ],
      ...drivers,
    ]),
    "write units per task by table and GSI (computed):",
    table([["table[/GSI]", ...main.map((r) => r.run.shape)], ...bySource]),
    "table write units per task by operation, then requests per task:",
    table([
      [
        "table.operation",
        ...main.map((r) => `${r.run.shape} WRU`),
        ...main.map((r) => `${r.run.shape} req`),
      ],
      ...byOp,
    ]),
    "reported (ReturnConsumedCapacity INDEXES) vs computed, write units of successful writes:",
    table([
      ["shape", "reported table", "computed table", "", "reported GSI", "computed GSI", ""],
      ...agree,
    ]),
    "growth with the number of tasks (wide DAGs, commands 'true'):",
    table([growthHeader, ...growth.map(growthRow)]),
    "with OUT values (each task sets one 16-byte OUT parameter):",
    table([growthHeader, ...outs.map(growthRow)]),
    `task duration (${DURATION_TASKS} tasks at once on one worker; leases renewed every ${SHORT_LEASE.renew} s, lease ${SHORT_LEASE.lease} s):`,
    table([growthHeader, ...durations.map(growthRow)]),
    `lease renewals: a running task is handed to its worker's lease once (${round(lease.handOver, 2)} WRU); the worker's lease costs ${round(lease.perWorkerRenewal, 2)} WRU per renewal whatever it covers (${round(lease.perWorkerRenewal * (60 / DEFAULT_RENEW_SECONDS), 1)} per worker-minute at the default ${DEFAULT_RENEW_SECONDS} s); a 10-minute task adds ${money(lease.tenMinuteUsd(DURATION_TASKS))} per 1M tasks on a worker running ${DURATION_TASKS} at once, ${money(lease.tenMinuteUsd(1))} alone, ${money(lease.tenMinuteLambdaUsd)} in a Lambda invocation (one write setting its lease past the invocation's end, then one read of its task item per renewal period)`,
    `worst cost per 1M tasks: ${money(worstUsd)} (${worst.run.shape})`,
  ];
  const summaryOf = ({ run, m }: Row) => ({
    tasks: run.tasks,
    state: run.state,
    wallMs: run.wallMs,
    usdPerMillion: dollars(m),
    usage: m,
    writeUnitsBySource: writeUnitsBySource(run.counts),
    counts: run.counts,
  });
  return {
    name: "cost",
    summary: {
      pricesDate: PRICES_DATE,
      backend: benchBackend(),
      workers,
      shapes: Object.fromEntries(main.map((r) => [r.run.shape, summaryOf(r)])),
      growth: Object.fromEntries(growth.map((r) => [r.run.shape, summaryOf(r)])),
      outValues: Object.fromEntries(outs.map((r) => [r.run.shape, summaryOf(r)])),
      duration: {
        runs: Object.fromEntries(durations.map((r) => [r.run.shape, summaryOf(r)])),
        writeUnitsHandOver: lease.handOver,
        writeUnitsPerWorkerRenewal: lease.perWorkerRenewal,
      },
      comparison: {
        mwaaMonthlyFloorUsd: mwaa,
        sfnStandardUsdPerMillion: Object.fromEntries(
          main.map((r) => [
            r.run.shape,
            sfnStandardPerMillion({ tasks: r.run.tasks, fanOuts: r.fanOuts }),
          ]),
        ),
      },
      worst: { shape: worst.run.shape, usdPerMillion: worstUsd },
      goalUsdPerMillion: GOAL_USD_PER_MILLION,
    },
    tables,
  };
}

/**
 * What task duration costs, from runs of 0 s, 6 s and 12 s tasks: the write units (tasks table
 * and its index, where leases live) that grow between 6 s and 12 s are the worker lease's
 * renewals (the tasks' share of them); the rest of what 6 s adds over 0 s is the one hand-over
 * of each task to the worker's lease.
 */
function leaseFigures([d0, d6, d12]: [Row, Row, Row]) {
  const [s6, s12] = SLEEP_SECONDS;
  // The tasks table and its leases index only: the instance's writes vary with how events
  // batch, whatever the duration.
  const perTask = (r: Row) => {
    const s = writeUnitsBySource(r.run.counts);
    return ((s.tasks ?? 0) + (s["tasks/leases"] ?? 0)) / r.run.tasks;
  };
  const perTaskSecond = Math.max(0, (perTask(d12) - perTask(d6)) / (s12 - s6));
  const handOver = perTask(d6) - perTask(d0) - perTaskSecond * s6;
  // Shared by the tasks running at once, renewed every SHORT_LEASE.renew seconds.
  const perWorkerRenewal = perTaskSecond * DURATION_TASKS * SHORT_LEASE.renew;
  const renewalsIn10Min = (10 * 60) / DEFAULT_RENEW_SECONDS;
  const wru = PRICES.dynamoWriteRequestUnit.usd * 1e6;
  return {
    handOver,
    perWorkerRenewal,
    /** $ per 1M tasks a 10-minute task adds on a worker running `atOnce` tasks at once. */
    tenMinuteUsd: (atOnce: number) =>
      (handOver + (renewalsIn10Min * perWorkerRenewal) / atOnce) * wru,
    // One write setting the lease past the invocation's end (the same index move as a
    // hand-over), then one consistent GetItem of a task item under 4 KB (1 read unit) per period.
    tenMinuteLambdaUsd:
      handOver * wru + (renewalsIn10Min - 1) * PRICES.dynamoReadRequestUnit.usd * 1e6,
  };
}

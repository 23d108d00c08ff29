/**
 * 7. Load without loss (issue 12): against `shoal standalone` run as a child process,
 *   1. a burst: `--runs` (default 10,000) runs submitted at once, 200 in flight; every POST must
 *      be answered 202 or a clear 429/503 (Retry-After and the error body), a refused run is
 *      retried after Retry-After; then every accepted run must finish;
 *   2. a sustained arrival rate (`--rate` runs/s, default 80 % of the burst's runs/s) for
 *      `--minutes` (default 10), a reader timing GETs every 100 ms (goal: p99 < 100 ms);
 *   3. every accepted run must finish within a stated bound after the phase ends.
 * Reports accepted, refused, retried, lost (by kind; must be 0), finished, throughput, the
 * backlog when arrivals stop (unfinished runs and SQS queue depths), the peak RSS (VmHWM) of
 * standalone's main process and each child, and the 1-minute load average with each figure (the
 * machine is shared). Runs only when named: `npm run bench -- load --runs=1000 --minutes=1`.
 * The parts: the client (load-client.ts), the phases (load-phases.ts), the processes
 * (load-procs.ts).
 */
import { GetQueueAttributesCommand, ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { readEnvFileEntries } from "../lib/standalone/env-file.js";
import { putWorkflow } from "./api.js";
import { LoadClient, losses, type OutcomeCounts } from "./load-client.js";
import {
  burst,
  newSubmission,
  type Progress,
  perSecond,
  type ReadFigures,
  type Submission,
  startReader,
  sustained,
  waitFinished,
} from "./load-phases.js";
import { load1, MemoryWatch, startStandaloneChild } from "./load-procs.js";
import type { ScenarioOptions, ScenarioResult } from "./scenario.js";
import { stamp } from "./scenario.js";
import { round, table } from "./stats.js";

/** Client sockets in flight during the burst. */
const BURST_CONCURRENCY = 200;
/** Tasks per run: `a → b → c`, each `true`. */
const TASKS_PER_RUN = 3;
const DEFINITION = {
  description: "load bench: a → b → c, each 'true'",
  tasks: [
    { code: "a", type: "SHELL", command: "true" },
    { code: "b", type: "SHELL", command: "true", upstream: ["a"] },
    { code: "c", type: "SHELL", command: "true", upstream: ["b"] },
  ],
};

/** Messages waiting and in flight in each SQS queue of the standalone (its endpoints.env). */
async function queueDepths(dataDir: string): Promise<Record<string, number>> {
  const env = readEnvFileEntries(`${dataDir}/endpoints.env`);
  const sqs = new SQSClient({
    region: env.AWS_REGION ?? "us-east-1",
    endpoint: env.AWS_ENDPOINT_URL_SQS,
    credentials: {
      accessKeyId: env.AWS_ACCESS_KEY_ID ?? "x",
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? "x",
    },
  });
  const out: Record<string, number> = {};
  try {
    const urls = (await sqs.send(new ListQueuesCommand({}))).QueueUrls ?? [];
    for (const url of urls) {
      const a = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
      );
      const n =
        Number(a.Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
      if (n > 0) out[url.slice(url.lastIndexOf("/") + 1)] = n;
    }
  } catch (e) {
    out[`error: ${String(e).slice(0, 80)}`] = Number.NaN;
  } finally {
    sqs.destroy();
  }
  return out;
}

/** The bound stated for "every accepted run finishes": 2 × the time the backlog needs at `rate`, plus 60 s. */
function finishBoundMs(unfinished: number, runsPerSecond: number): number {
  return Math.round(60_000 + (2 * unfinished * 1000) / Math.max(runsPerSecond, 1));
}

interface PhaseFigures {
  phase: string;
  sub: Submission;
  /** Right when the last submission was answered. */
  backlog: { unfinished: number; queues: Record<string, number>; load1: number };
  finish: {
    progress: Progress;
    waitedMs: number;
    withinBound: boolean;
    boundMs: number;
    load1: number;
  };
  runsPerSecond: number;
  tasksPerSecond: number;
  reads: ReadFigures;
  load1AtEnd: number;
}

async function phaseEnd(
  phase: string,
  client: LoadClient,
  dataDir: string,
  workflow: string,
  sub: Submission,
  reads: ReadFigures,
  expectedRate: number | undefined,
): Promise<PhaseFigures> {
  const load1AtEnd = load1();
  const queues = await queueDepths(dataDir);
  const first = await waitFinished(client, workflow, sub.ids, 0);
  // Without a rate (the burst): the runs finished per second while it was being submitted.
  const rate = expectedRate ?? perSecond(first.progress.finished, sub.spanMs);
  const boundMs = finishBoundMs(first.progress.unfinished, rate);
  const finish = await waitFinished(client, workflow, sub.ids, boundMs);
  const p = finish.progress;
  const spanMs = p.lastEndedAt - sub.startedAt;
  return {
    phase,
    sub,
    backlog: { unfinished: first.progress.unfinished, queues, load1: load1AtEnd },
    finish: { ...finish, boundMs },
    runsPerSecond: perSecond(p.finished, spanMs),
    tasksPerSecond: perSecond(p.finished * TASKS_PER_RUN, spanMs),
    reads,
    load1AtEnd,
  };
}

function lossCells(c: OutcomeCounts): Array<number> {
  return [c.dropped, c.timeout, c.other5xx, c.unclearRefusal, c.unexpected];
}

/** The scenario (see the file's comment). */
export async function load(opts: ScenarioOptions): Promise<ScenarioResult> {
  const runs = opts.runs ?? 10_000;
  const minutes = opts.minutes ?? 10;
  const workers = opts.workers?.[0] ?? 8;
  const sa = await startStandaloneChild(workers);
  const memory = new MemoryWatch(sa.proc.pid ?? 0);
  const writer = new LoadClient(sa.apiUrl, BURST_CONCURRENCY);
  const readerClient = new LoadClient(sa.apiUrl, 4, 10_000);
  const phases: PhaseFigures[] = [];
  let rate = opts.rate;
  const load1AtStart = load1();
  try {
    const wfBurst = `load-burst-${stamp()}`;
    const wfSustained = `load-sustained-${stamp()}`;
    await putWorkflow(sa.apiUrl, wfBurst, DEFINITION);
    await putWorkflow(sa.apiUrl, wfSustained, DEFINITION);

    process.stdout.write(`load: burst of ${runs} runs, ${BURST_CONCURRENCY} in flight…\n`);
    const burstSub = newSubmission();
    const burstReader = startReader(readerClient, () => burstSub.ids);
    await burst(writer, wfBurst, runs, BURST_CONCURRENCY, burstSub);
    const burstReads = await burstReader.stop();
    // Its runs' throughput calibrates the sustained rate unless --rate says.
    const b = await phaseEnd("burst", writer, sa.dataDir, wfBurst, burstSub, burstReads, undefined);
    phases.push(b);
    rate ??= Math.max(1, round(b.runsPerSecond * 0.8, 1));

    process.stdout.write(`load: ${rate} runs/s for ${minutes} min…\n`);
    const live = newSubmission();
    const reader = startReader(readerClient, () => live.ids);
    const s = await sustained(writer, wfSustained, rate, minutes, live);
    const reads = await reader.stop();
    phases.push(await phaseEnd("sustained", writer, sa.dataDir, wfSustained, s, reads, rate));
  } catch (e) {
    throw new Error(
      `${String((e as Error)?.stack ?? e)}\nstandalone said: ${sa.output().slice(-2000)}`,
    );
  } finally {
    writer.close();
    readerClient.close();
  }
  const peaks = memory.stop();
  await sa.stop();

  const lost = phases.reduce((n, p) => n + p.sub.lostRuns + losses(p.sub.counts), 0);
  const unfinished = phases.reduce((n, p) => n + p.finish.progress.unfinished, 0);
  const tables = [
    `== load: 3-task chain (a → b → c, each 'true'), standalone child with ${workers} worker slots; burst ${runs} runs (${BURST_CONCURRENCY} in flight), then ${rate} runs/s for ${minutes} min${opts.rate ? "" : " (80 % of the burst's runs/s)"}; load average ${load1AtStart} at start (shared 2-core machine: noisy)`,
    table([
      [
        "phase",
        "runs",
        "accepted",
        "refusals",
        "runs retried",
        "lost runs",
        "dropped",
        "timeout",
        "other 5xx",
        "unclear 429/503",
        "unexpected",
        "POST p50 ms",
        "POST p99 ms",
        "submit s",
        "load1",
      ],
      ...phases.map((p) => [
        p.phase,
        p.sub.ids.length + p.sub.lostRuns,
        p.sub.counts.accepted,
        p.sub.counts.refused,
        p.sub.retriedRuns,
        p.sub.lostRuns,
        ...lossCells(p.sub.counts),
        p.sub.acceptedMs.p50,
        p.sub.acceptedMs.p99,
        round(p.sub.spanMs / 1000, 1),
        p.load1AtEnd,
      ]),
    ]),
    "finishing: backlog = accepted runs not final when the last submission was answered; bound = 60 s + 2 × backlog ÷ runs/s (sustained: --rate; burst: runs finished per second while it was submitted)",
    table([
      [
        "phase",
        "backlog runs",
        "queued messages",
        "finished",
        "SUCCESS",
        "FAILURE/STOPPED",
        "unfinished",
        "waited s",
        "bound s",
        "within bound",
        "runs/s",
        "tasks/s",
        "load1",
      ],
      ...phases.map((p) => [
        p.phase,
        p.backlog.unfinished,
        Object.entries(p.backlog.queues)
          .map(([q, n]) => `${q}=${n}`)
          .join(" ") || "0",
        p.finish.progress.finished,
        p.finish.progress.success,
        p.finish.progress.failedRuns,
        p.finish.progress.unfinished,
        round(p.finish.waitedMs / 1000, 1),
        round(p.finish.boundMs / 1000, 0),
        p.finish.withinBound ? "yes" : "NO",
        p.runsPerSecond,
        p.tasksPerSecond,
        p.finish.load1,
      ]),
    ]),
    "reads meanwhile (one GET every 100 ms: list ?limit=20, an instance, health), ms:",
    table([
      ["phase", "kind", "n", "p50", "p95", "p99", "max", "not 200"],
      ...phases.flatMap((p) => [
        ...Object.entries(p.reads.byKind).map(([k, v]) => [
          p.phase,
          k,
          v.n,
          v.p50,
          v.p95,
          v.p99,
          v.max,
          Object.entries(p.reads.failed)
            .filter(([f]) => f.startsWith(k))
            .reduce((n, [, c]) => n + c, 0),
        ]),
        [
          p.phase,
          "all",
          p.reads.all.n,
          p.reads.all.p50,
          p.reads.all.p95,
          p.reads.all.p99,
          p.reads.all.max,
          Object.values(p.reads.failed).reduce((a, c) => a + c, 0),
        ],
      ]),
    ]),
    "peak memory (VmHWM of /proc/<pid>/status), MiB:",
    table([
      ["process", "pids", "peak RSS MiB", "RSS at end MiB"],
      ...peaks.map((m) => [m.role, m.pids.join(","), m.peakMiB, m.lastRssMiB]),
    ]),
    `lost: ${lost} (must be 0); unfinished: ${unfinished}; read p99 < 100 ms in the sustained phase: ${phases[1]?.reads.p99Under100 ? "yes" : "NO"}`,
    ...phases.flatMap((p) =>
      p.sub.counts.examples.length
        ? [`${p.phase} loss examples: ${p.sub.counts.examples.join(" | ")}`]
        : [],
    ),
  ];
  return {
    name: "load",
    summary: {
      runs,
      minutes,
      rate,
      workers,
      load1AtStart,
      lost,
      unfinished,
      phases: phases.map((p) => ({ ...p, sub: { ...p.sub, ids: p.sub.ids.length } })),
      peakMemory: peaks,
    },
    tables,
  };
}

/**
 * 1. Hop latency over a 100-task chain of no-op SHELL tasks: parent end → child start, split at
 * the child's submission, the anatomy of a hop from the request trace (anatomy.ts), and the idle
 * request rate of standalone measured first.
 */
import { setTimeout as delay } from "node:timers/promises";
import { hopAnatomy } from "./anatomy.js";
import { ms } from "./api.js";
import { startHarness } from "./harness.js";
import { type ScenarioOptions, type ScenarioResult, stamp } from "./scenario.js";
import { round, summarize, table } from "./stats.js";
import { runWorkflow } from "./workflow-run.js";
import {
  compact,
  cpuLine,
  latencyTable,
  profileTable,
  REQUEST_HEADER,
  requestRows,
} from "./workflow-run-report.js";

/** 1. Hop latency over a 100-task chain of no-op SHELL tasks. */
export async function hop(opts: ScenarioOptions): Promise<ScenarioResult> {
  const workers = opts.workers?.[0] ?? 2;
  const n = 100;
  const tasks = Array.from({ length: n }, (_, i) => ({
    code: `t${i + 1}`,
    type: "SHELL" as const,
    upstream: i === 0 ? [] : [`t${i}`],
    command: "true",
  }));
  const h = await startHarness(workers);
  try {
    // Idle request rate first (sweeper ticks, long polls), to separate it from per-task counts.
    await delay(1_000); // the pollers' first receives
    h.instr.reset();
    await delay(5_000);
    const idleUsage = h.instr.usage();
    const idleRate = round(h.instr.counter.total() / (idleUsage.wallMs / 1000), 2);
    const idleCounts = h.instr.counts();

    const r = await runWorkflow(
      h,
      `bench-hop-${stamp()}`,
      { description: "hop benchmark", tasks },
      {
        deadlineMs: 120_000,
        profile: opts.profile,
        trace: !opts.profile,
      },
    );
    const anatomy = r.trace
      ? hopAnatomy(r.instance, n, r.trace.requests, r.trace.offset)
      : undefined;
    const byCode = new Map(r.instance.tasks.map((t) => [t.code, t]));
    const hops: number[] = [];
    const endToSubmit: number[] = [];
    const submitToStart: number[] = [];
    const runTimes: number[] = [];
    for (let i = 1; i <= n; i++) {
      const t = byCode.get(`t${i}`);
      if (!t) throw new Error(`task t${i} missing from the instance`);
      runTimes.push(ms(t.endedAt) - ms(t.startedAt));
      if (i === 1) continue;
      const p = byCode.get(`t${i - 1}`);
      hops.push(ms(t.startedAt) - ms(p?.endedAt));
      endToSubmit.push(ms(t.submittedAt) - ms(p?.endedAt));
      submitToStart.push(ms(t.startedAt) - ms(t.submittedAt));
    }
    const hopS = summarize(hops);
    const summary = {
      workers,
      state: r.state,
      hopMs: { median: hopS.p50, p90: hopS.p90, max: hopS.max, mean: hopS.mean },
      parentEndToChildSubmittedMs: summarize(endToSubmit),
      childSubmittedToStartedMs: summarize(submitToStart),
      taskRunMs: summarize(runTimes),
      idle: {
        requestsPerSecond: idleRate,
        counts: idleCounts,
        cpuMainPct: round(idleUsage.cpuMainPct, 1),
      },
      ...(anatomy ? { anatomy } : {}),
      run: compact(r),
    };
    const tables = [
      `== hop: 100-task chain of 'true', ${workers} worker slots — ${r.state}, wall ${r.wallMs} ms (POST → SUCCESS), span ${r.spanMs} ms`,
      table([
        ["figure (ms)", "median", "p90", "max", "mean"],
        ["hop = child.startedAt − parent.endedAt (99)", hopS.p50, hopS.p90, hopS.max, hopS.mean],
        ["  parent.endedAt → child.submittedAt", ...pick(summarize(endToSubmit))],
        ["  child.submittedAt → child.startedAt", ...pick(summarize(submitToStart))],
        ["task run (startedAt → endedAt) of 'true'", ...pick(summarize(runTimes))],
      ]),
      ...(anatomy
        ? [
            `anatomy of a hop (${anatomy.hopsAnalysed} hops; each step from the previous step's end to this request's return; ~${anatomy.concurrentRequestsPerHop} other requests in flight per hop):`,
            table([
              ["step (ms)", "elapsed p50", "p90", "mean", "its request p50", "p90"],
              ...anatomy.steps.flatMap((st) => [
                [
                  st.name,
                  st.elapsed.p50,
                  st.elapsed.p90,
                  st.elapsed.mean,
                  st.requestLatency.p50,
                  st.requestLatency.p90,
                ],
                ...Object.entries(st.nested).map(([op, x]) => [
                  `    inside: ${op} (${x.perHop} per hop)`,
                  Number.NaN,
                  Number.NaN,
                  Number.NaN,
                  x.p50,
                  x.p90,
                ]),
              ]),
              [
                "worker: receive → claim timestamp (child.startedAt)",
                anatomy.tail.p50,
                anatomy.tail.p90,
                anatomy.tail.mean,
                Number.NaN,
                Number.NaN,
              ],
            ]),
          ]
        : []),
      cpuLine(r),
      `idle standalone: ${idleRate} requests/s (${Object.entries(idleCounts)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")} in 5 s)`,
      table([REQUEST_HEADER, ...requestRows("hop", r)]),
      latencyTable(r),
      ...profileTable(r),
    ];
    return { name: "hop", summary, tables };
  } finally {
    await h.stop();
  }
}

/** A summary's median, p90, max and mean, in the hop table's column order. */
function pick(s: ReturnType<typeof summarize>): number[] {
  return [s.p50, s.p90, s.max, s.mean];
}

/**
 * The invariants of a chaos run, as pure functions of what the harness read: the side-effect
 * lines the load's tasks wrote (`<instance> <task> <attempt> start|end <epoch ms>`), the
 * instances as the API shows them, the DAGs of the load, and the schedules' fire ledgers.
 * docs/reliability.md states the guarantees they check.
 */

/** One side-effect line. `seq` is its position in the file (appends are ordered). */
export interface Effect {
  instanceId: string;
  code: string;
  attempt: number;
  kind: "start" | "end";
  /** Epoch ms (the task's `date +%s%3N`). */
  at: number;
  seq: number;
}

/** Parses a side-effect file; lines that do not parse are returned apart (none are expected). */
export function parseEffects(text: string): { effects: Effect[]; malformed: string[] } {
  const effects: Effect[] = [];
  const malformed: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const m = /^(\S+) (\S+) (\d+) (start|end) (\d+)$/.exec(line.trim());
    if (!m) {
      malformed.push(line);
      continue;
    }
    effects.push({
      instanceId: m[1] as string,
      code: m[2] as string,
      attempt: Number(m[3]),
      kind: m[4] as "start" | "end",
      at: Number(m[5]),
      seq: effects.length,
    });
  }
  return { effects, malformed };
}

/** An instance as the API shows it (`GET /v1/instances/{id}`): the fields checked. */
export interface InstanceView {
  instanceId: string;
  workflow: string;
  state: string;
  tasks: Array<{ code: string; state: string; attempt: number }>;
}

/** The outcome of one invariant: whether it held, and the figures or evidence behind it. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** Up to a few examples of violations (ids, lines). */
  evidence?: string[];
}

export const FINAL_STATES = ["SUCCESS", "FAILURE", "STOPPED"];

const EXAMPLES = 5;

/** Counted figures of a run, beside its checks. */
export interface RunFigures {
  instances: number;
  success: number;
  /** Distinct attempts that started (from the side-effect file). */
  attempts: number;
  /** Attempts beyond the first of a task (failovers; the load's tasks never fail). */
  failovers: number;
  /** Two attempts of one task overlapping in time (the first ended after the second started). */
  doubleExecutions: number;
  /** The longest such overlap, ms. */
  maxOverlapMs: number;
  /**
   * The longest time between two consecutive side-effect lines of one instance, ms, and where:
   * how long a fault held an instance up.
   */
  maxIdle: { ms: number; where: string };
}

/**
 * Checks the runs of a scenario after its faults stopped and the runs were given `boundS` to
 * finish:
 * - every instance is final (SUCCESS, FAILURE, STOPPED);
 * - none failed (the load's tasks always exit 0: a FAILURE can only come from infrastructure);
 * - a SUCCESS instance has an `end` line for the attempt the API says succeeded, for every task;
 * - no task starts before the succeeded attempt of each of its parents ended (file order);
 * - no attempt starts or ends twice (one instance, task and attempt number);
 * - double executions (attempt n+k started while attempt n still ran, and n then ended) only
 *   within `overlapWindowMs` (the lease renewal period plus the time to kill a task).
 */
export function checkRuns(input: {
  instances: InstanceView[];
  dags: Record<string, Record<string, string[]>>;
  effects: Effect[];
  boundS: number;
  overlapWindowMs: number;
}): { checks: Check[]; figures: RunFigures } {
  const { instances, dags, effects } = input;
  const key = (i: string, c: string, a?: number) =>
    a === undefined ? `${i} ${c}` : `${i} ${c} ${a}`;
  const starts = new Map<string, Effect[]>();
  const ends = new Map<string, Effect[]>();
  const attemptsOf = new Map<string, Set<number>>();
  for (const e of effects) {
    const map = e.kind === "start" ? starts : ends;
    const k = key(e.instanceId, e.code, e.attempt);
    map.set(k, [...(map.get(k) ?? []), e]);
    if (e.kind === "start") {
      const t = key(e.instanceId, e.code);
      attemptsOf.set(t, (attemptsOf.get(t) ?? new Set()).add(e.attempt));
    }
  }

  const notFinal = instances.filter((i) => !FINAL_STATES.includes(i.state));
  const failed = instances.filter((i) => i.state !== "SUCCESS" && FINAL_STATES.includes(i.state));
  const missingEnd: string[] = [];
  const childFirst: string[] = [];
  for (const inst of instances.filter((i) => i.state === "SUCCESS")) {
    const dag = dags[inst.workflow] ?? {};
    const byCode = new Map(inst.tasks.map((t) => [t.code, t]));
    const endOf = (code: string) => {
      const t = byCode.get(code);
      return t ? ends.get(key(inst.instanceId, code, t.attempt))?.[0] : undefined;
    };
    for (const code of Object.keys(dag)) {
      const t = byCode.get(code);
      if (t?.state !== "SUCCESS" || !endOf(code))
        missingEnd.push(
          `${inst.instanceId} ${code} (API: ${t ? `${t.state} attempt ${t.attempt}` : "absent"})`,
        );
    }
    for (const [code, parents] of Object.entries(dag)) {
      const childStarts = [...(attemptsOf.get(key(inst.instanceId, code)) ?? [])].flatMap(
        (a) => starts.get(key(inst.instanceId, code, a)) ?? [],
      );
      for (const p of parents) {
        const parentEnd = endOf(p);
        for (const s of childStarts)
          if (!parentEnd || s.seq < parentEnd.seq)
            childFirst.push(
              `${inst.instanceId}: ${code} attempt ${s.attempt} started (line ${s.seq + 1}) before ${p} ended (${parentEnd ? `line ${parentEnd.seq + 1}` : "no end line"})`,
            );
      }
    }
  }

  const twice: string[] = [];
  for (const [k, list] of starts) if (list.length > 1) twice.push(`${k}: ${list.length} starts`);
  for (const [k, list] of ends) if (list.length > 1) twice.push(`${k}: ${list.length} ends`);

  let doubles = 0;
  let maxOverlap = 0;
  const beyond: string[] = [];
  let attempts = 0;
  let failovers = 0;
  for (const [t, set] of attemptsOf) {
    const sorted = [...set].sort((a, b) => a - b);
    attempts += sorted.length;
    failovers += Math.max(0, (sorted.at(-1) ?? 1) - 1);
    for (const a of sorted) {
      const aEnd = ends.get(`${t} ${a}`)?.[0];
      if (!aEnd) continue; // killed with its worker: it never overlapped past its kill
      for (const b of sorted.filter((x) => x > a)) {
        const bStart = starts.get(`${t} ${b}`)?.[0];
        if (!bStart || bStart.seq > aEnd.seq) continue;
        doubles++;
        const overlap = aEnd.at - bStart.at;
        maxOverlap = Math.max(maxOverlap, overlap);
        if (overlap > input.overlapWindowMs)
          beyond.push(`${t}: attempt ${a} ended ${overlap} ms after attempt ${b} started`);
      }
    }
  }

  // The longest silence of an instance: the longest time between two consecutive lines of its
  // tasks (they run under a second, so a long one is a wait for a failover, a redelivery, …).
  let maxIdle = { ms: 0, where: "" };
  const lastLine = new Map<string, Effect>();
  for (const e of effects) {
    const prev = lastLine.get(e.instanceId);
    if (prev && e.at - prev.at > maxIdle.ms)
      maxIdle = {
        ms: e.at - prev.at,
        where: `${e.instanceId}: ${prev.code} attempt ${prev.attempt} ${prev.kind} → ${e.code} attempt ${e.attempt} ${e.kind}`,
      };
    lastLine.set(e.instanceId, e);
  }

  const ex = (list: string[]) => list.slice(0, EXAMPLES);
  const checks: Check[] = [
    {
      name: `final within ${input.boundS} s`,
      ok: notFinal.length === 0,
      detail: `${instances.length - notFinal.length}/${instances.length} final`,
      evidence: ex(notFinal.map((i) => `${i.instanceId} ${i.workflow} ${i.state}`)),
    },
    {
      name: "no instance failed",
      ok: failed.length === 0,
      detail: `${failed.length} failed`,
      evidence: ex(
        failed.map(
          (i) =>
            `${i.instanceId} ${i.state}: ${i.tasks
              .filter((t) => t.state !== "SUCCESS")
              .map((t) => `${t.code} ${t.state} attempt ${t.attempt}`)
              .join(", ")}`,
        ),
      ),
    },
    {
      name: "SUCCESS has every end",
      ok: missingEnd.length === 0,
      detail: `${missingEnd.length} missing`,
      evidence: ex(missingEnd),
    },
    {
      name: "parent ends before child starts",
      ok: childFirst.length === 0,
      detail: `${childFirst.length} violations`,
      evidence: ex(childFirst),
    },
    {
      name: "no attempt runs or ends twice",
      ok: twice.length === 0,
      detail: `${twice.length} duplicates`,
      evidence: ex(twice),
    },
    {
      name: `double executions within ${input.overlapWindowMs} ms`,
      ok: beyond.length === 0,
      detail: `${doubles} double executions, max overlap ${maxOverlap} ms`,
      evidence: ex(beyond),
    },
  ];
  return {
    checks,
    figures: {
      instances: instances.length,
      success: instances.filter((i) => i.state === "SUCCESS").length,
      attempts,
      failovers,
      doubleExecutions: doubles,
      maxOverlapMs: maxOverlap,
      maxIdle,
    },
  };
}

/** A fire-ledger entry (`GET /v1/schedules/{id}/fires`). */
export interface Fire {
  nominalTime: string;
  decision: string;
  instanceId?: string;
}

/**
 * Every nominal time fires exactly once: the ledger of a schedule with period `periodMs` has one
 * entry per nominal time from its first to its last (no gap, no duplicate), each FIRED entry
 * names an instance the API lists, and no two instances share one schedule time.
 * @param expected nominal times (epoch ms) the ledger must reach at least: from its first fire to
 *   the last one due before the schedule was taken offline
 * @param scheduleTimes the `scheduleTime` of every instance of the schedule's workflow
 */
export function checkFires(
  schedule: string,
  fires: Fire[],
  periodMs: number,
  scheduleTimes: string[],
  instanceIds: ReadonlySet<string>,
  expected?: { from: number; to: number },
): { check: Check; fired: number } {
  const times = fires.map((f) => Date.parse(f.nominalTime)).sort((a, b) => a - b);
  const problems: string[] = [];
  if (expected) {
    // The first and last nominal times that had to be decided (epoch ms, inclusive).
    const first = times[0];
    const last = times.at(-1);
    if (first === undefined || first > expected.from)
      problems.push(
        `missing from the start: first entry ${first === undefined ? "none" : new Date(first).toISOString()}, expected ${new Date(expected.from).toISOString()}`,
      );
    if (last === undefined || last < expected.to)
      problems.push(
        `missing at the end: last entry ${last === undefined ? "none" : new Date(last).toISOString()}, expected ${new Date(expected.to).toISOString()} or later`,
      );
  }
  for (let i = 1; i < times.length; i++) {
    const gap = (times[i] as number) - (times[i - 1] as number);
    if (gap === 0) problems.push(`duplicate entry ${new Date(times[i] as number).toISOString()}`);
    else if (gap !== periodMs)
      problems.push(
        `gap: ${new Date(times[i - 1] as number).toISOString()} → ${new Date(times[i] as number).toISOString()}`,
      );
  }
  const fired = fires.filter((f) => f.decision === "FIRED");
  for (const f of fired)
    if (!f.instanceId || !instanceIds.has(f.instanceId))
      problems.push(`${f.nominalTime}: FIRED names no listed instance (${f.instanceId ?? "none"})`);
  const counts = new Map<string, number>();
  for (const t of scheduleTimes) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (const [t, n] of counts) if (n > 1) problems.push(`${n} instances for schedule time ${t}`);
  const others = fires.length - fired.length;
  return {
    check: {
      name: "each fire time once",
      ok: problems.length === 0 && fires.length > 0,
      detail: `${schedule}: ${fires.length} nominal times, ${fired.length} fired${others ? `, ${others} other decisions` : ""}, ${problems.length} problems`,
      evidence: problems.slice(0, EXAMPLES),
    },
    fired: fired.length,
  };
}

/** A kill and the task attempts its process held at that moment. */
export interface Kill {
  at: number;
  held: Array<{ instanceId: string; code: string; attempt: number }>;
}

/**
 * Kill → replacement latencies, ms: for each task attempt a killed process held, the time from
 * the kill to the next `start` of the same task with a higher attempt. Attempts never replaced
 * are counted apart.
 */
export function replacementLatencies(
  kills: Kill[],
  effects: Effect[],
): { latencies: number[]; unreplaced: string[] } {
  const latencies: number[] = [];
  const unreplaced: string[] = [];
  for (const k of kills)
    for (const h of k.held) {
      const next = effects.find(
        (e) =>
          e.kind === "start" &&
          e.instanceId === h.instanceId &&
          e.code === h.code &&
          e.attempt > h.attempt,
      );
      if (next) latencies.push(Math.max(0, next.at - k.at));
      else unreplaced.push(`${h.instanceId} ${h.code} attempt ${h.attempt}`);
    }
  return { latencies, unreplaced };
}

/** The `p`-th percentile (0..100, nearest rank) of `values`; undefined when empty. */
export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** `p50/p99/max` of latencies in seconds (one decimal), or `-` when there are none. */
export function latencySummary(values: number[]): string {
  if (values.length === 0) return "-";
  const s = (v: number | undefined) => ((v ?? 0) / 1000).toFixed(1);
  return `${s(percentile(values, 50))}/${s(percentile(values, 99))}/${s(Math.max(...values))} s`;
}

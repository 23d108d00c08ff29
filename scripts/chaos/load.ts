/**
 * The load of a chaos scenario: small DAG workflows whose SHELL tasks append
 * `<instance> <task> <attempt> start|end <epoch ms>` lines to a side-effect file (appends of a
 * line under 4 KB are atomic, so lines never interleave), runs submitted continuously at a
 * modest rate with an idempotency key (a run whose 202 was lost is asked for again and names the
 * same instance), and 1-second cron schedules. Also the few API calls the harness makes.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Random } from "./random.js";

/** Upstream codes by task code. */
export type Dag = Record<string, string[]>;

/** A workflow of the load: its name and DAG. */
export interface LoadWorkflow {
  name: string;
  dag: Dag;
}

/** An API answer: status and parsed JSON body (status 0: no answer, `error` says why). */
export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the harness reads loosely typed JSON answers
  body: any;
  error?: string;
}

/** One JSON request to the API with a timeout; never throws (no answer is status 0). */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<Answer> {
  try {
    const res = await fetch(base + path, {
      method,
      headers: { "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: keep the text.
    }
    return { status: res.status, body: parsed };
  } catch (e) {
    return { status: 0, body: undefined, error: String((e as Error)?.message ?? e) };
  }
}

/** The shell command of a load task: a start line, a sleep, an end line. */
export function taskCommand(effectsFile: string, sleepSeconds: number): string {
  const line = (kind: string) =>
    `echo "$SHOAL_INSTANCE_ID $SHOAL_TASK_CODE $SHOAL_ATTEMPT ${kind} $(date +%s%3N)" >> '${effectsFile}'`;
  return `${line("start")}; sleep ${sleepSeconds.toFixed(2)}; ${line("end")}`;
}

/** A chain, a fan-out/fan-in and a layered mesh of a few dozen tasks, drawn from `rng`. */
export function loadWorkflows(rng: Random, prefix: string): LoadWorkflow[] {
  const chain: Dag = {};
  for (let i = 1; i <= 5; i++) chain[`c${i}`] = i === 1 ? [] : [`c${i - 1}`];
  const fan: Dag = { root: [] };
  for (let i = 1; i <= 8; i++) fan[`f${i}`] = ["root"];
  fan.join = Object.keys(fan).filter((c) => c !== "root");
  const mesh: Dag = {};
  let previous: string[] = [];
  for (const [layer, width] of [4, 6, 6, 6, 2].entries()) {
    const current: string[] = [];
    for (let i = 1; i <= width; i++) {
      const code = `m${layer}_${i}`;
      const parents =
        previous.length === 0
          ? []
          : [...new Set([rng.pick(previous), rng.pick(previous), rng.pick(previous)])];
      mesh[code] = parents.slice(0, rng.int(1, parents.length));
      current.push(code);
    }
    previous = current;
  }
  return [
    { name: `${prefix}-chain`, dag: chain },
    { name: `${prefix}-fan`, dag: fan },
    { name: `${prefix}-mesh`, dag: mesh },
  ];
}

/** The definition of a load workflow (PUT body): SHELL tasks with sleeps from `rng`. */
export function definitionOf(wf: LoadWorkflow, effectsFile: string, rng: Random): unknown {
  return {
    description: "chaos load (scripts/chaos)",
    tasks: Object.entries(wf.dag).map(([code, upstream]) => ({
      code,
      type: "SHELL",
      upstream,
      // A quarter outlive the first lease renewal (1 s standalone), so that kills hit attempts
      // on their worker's lease as well as on their own (docs/architecture.md §3).
      command: taskCommand(
        effectsFile,
        rng.between(0, 1) < 0.25 ? rng.between(1.5, 3) : rng.between(0.1, 0.8),
      ),
    })),
  };
}

/**
 * PUTs the workflows, retrying for up to `timeoutMs` (a standalone just restarted may answer 503).
 * @throws Error with the last answer when a PUT never succeeded.
 */
export async function putWorkflows(
  base: string,
  defs: Array<{ name: string; body: unknown }>,
  timeoutMs = 30_000,
): Promise<void> {
  for (const d of defs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await call(base, "PUT", `/v1/workflows/${d.name}`, d.body);
      if (r.status === 200 || r.status === 201) break;
      if (Date.now() > deadline)
        throw new Error(`PUT ${d.name}: ${r.status} ${r.error ?? JSON.stringify(r.body)}`);
      await sleep(500);
    }
  }
}

/**
 * Time between two submitted runs, ms (drawn per run): a run averages about 13 tasks of 0.45 s,
 * so this keeps about 4 task slots busy, under the 8 to 12 slots a scenario has: the runs wait
 * for faults, not for a slot.
 */
export const SUBMIT_INTERVAL_MS = { min: 1000, max: 2500 } as const;

/** A run the submitter asked for: its key, and its instance once a 202 named it. */
export interface SubmittedRun {
  key: string;
  workflow: string;
  instanceId?: string;
  acceptedAt?: number;
}

/** Submits runs of `workflows` every `intervalMs` (drawn per run) until stopped. */
export class Submitter {
  readonly runs: SubmittedRun[] = [];
  /** POSTs that got no 202 (each retried until one does). */
  refused = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;

  /**
   * @param base a function, as the API's URL may change (it does not with a fixed port)
   * @param onAccepted called after each 202 (the control-plane scenario kills right after some)
   */
  constructor(
    private readonly base: () => string,
    private readonly workflows: readonly string[],
    private readonly rng: Random,
    private readonly keyPrefix: string,
    private readonly intervalMs: { min: number; max: number },
    private readonly onAccepted: (run: SubmittedRun) => Promise<void> | void = () => {},
  ) {}

  /**
   * The submitter of one scenario: its workflows, at {@link SUBMIT_INTERVAL_MS}, with
   * idempotency keys named after the scenario; started.
   */
  static start(
    ctx: { name: string; rng: Random },
    base: () => string,
    workflows: readonly string[],
    onAccepted?: (run: SubmittedRun) => Promise<void> | void,
  ): Submitter {
    const s = new Submitter(
      base,
      workflows,
      ctx.rng,
      `${ctx.name}-${Date.now()}`,
      SUBMIT_INTERVAL_MS,
      onAccepted,
    );
    s.start();
    return s;
  }

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        const run: SubmittedRun = {
          key: `${this.keyPrefix}-${this.runs.length + 1}`,
          workflow: this.rng.pick(this.workflows),
        };
        this.runs.push(run);
        await this.submit(run);
        if (run.instanceId) await this.onAccepted(run);
        await this.retryPending(2);
        await sleep(this.rng.between(this.intervalMs.min, this.intervalMs.max));
      }
    })();
  }

  /** Stops submitting new runs; resolves when the loop ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** Asks again for runs that got no 202, until each did or `timeoutMs` passed. */
  async settle(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending().length > 0 && Date.now() < deadline) {
      await this.retryPending(Number.POSITIVE_INFINITY);
      if (this.pending().length > 0) await sleep(1000);
    }
  }

  /** Runs with no 202 yet. */
  pending(): SubmittedRun[] {
    return this.runs.filter((r) => !r.instanceId);
  }

  private async retryPending(max: number): Promise<void> {
    let n = 0;
    for (const run of this.pending()) {
      if (n++ >= max) break;
      await this.submit(run);
    }
  }

  private async submit(run: SubmittedRun): Promise<void> {
    const r = await call(this.base(), "POST", `/v1/workflows/${run.workflow}/runs`, {
      idempotencyKey: run.key,
    });
    if (r.status === 202 && typeof r.body?.instanceId === "string") {
      run.instanceId = r.body.instanceId;
      run.acceptedAt = Date.now();
    } else this.refused++;
  }
}

/**
 * Creates an every-second cron schedule of `workflow` (FIRE_ALL, so that a time missed while
 * every sweeper was down is fired late rather than skipped) and returns its id and first time.
 * @throws Error with the answer unless it is a 201.
 */
export async function createSecondlySchedule(
  base: string,
  workflow: string,
): Promise<{ id: string; nextFireTime: string }> {
  const r = await call(base, "POST", "/v1/schedules", {
    workflow,
    cron: "* * * * * *",
    timezone: "UTC",
    misfirePolicy: "FIRE_ALL",
    maxCatchup: 1000,
  });
  if (r.status !== 201)
    throw new Error(`schedule ${workflow}: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.id, nextFireTime: r.body.nextFireTime };
}

/** Every item of a paginated list (`items`, `nextToken`); throws unless each page is a 200. */
export async function listAll(base: string, path: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let token: string | undefined;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const r = await call(
      base,
      "GET",
      `${path}${sep}limit=200${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
    );
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    items.push(...(r.body.items as unknown[]));
    token = r.body.nextToken;
  } while (token);
  return items;
}

/** The state of `/v1/health`: its status code (0: no answer) and its `parts`. */
export async function health(base: string): Promise<{ status: number; parts?: unknown }> {
  const r = await call(base, "GET", "/v1/health", undefined, 2_000);
  return { status: r.status, parts: r.body?.parts };
}

/**
 * Polls `/v1/health` until it answers 200, for up to `timeoutMs`; resolves with the ms it took,
 * or undefined when it never did.
 */
export async function waitHealthy(base: string, timeoutMs: number): Promise<number | undefined> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if ((await health(base)).status === 200) return Date.now() - t0;
    await sleep(100);
  }
  return undefined;
}

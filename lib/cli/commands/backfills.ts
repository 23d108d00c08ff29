/**
 * `shoal backfill WORKFLOW`, `shoal backfills` (list) and `shoal backfills
 * get|pause|resume|cancel`: runs of a workflow at
 * past nominal times — DolphinScheduler's "complement data", SERIAL or PARALLEL — over
 * `POST /v1/workflows/{name}/backfill` and `/v1/backfills/{id}` (lib/api/backfills.ts). The
 * API runs them LOW priority by default, so live runs go first.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { FAILURE_STRATEGIES, PRIORITIES } from "../../core/model.js";
import { checkTiming } from "../../core/schedule-check.js";
import { TERMINAL_BACKFILL_STATES } from "../api-states.js";
import type { Backfill, BackfillDryRun, Page } from "../api-types.js";
import { type CliContext, POLL_INTERVAL_MS } from "../context.js";
import { EXIT, UsageError } from "../errors.js";
import { durationBetween, formatTime, table, toJson } from "../format.js";
import { type FlagMap, seg } from "../http.js";
import {
  choiceOption,
  intIn,
  isoInstant,
  keyValue,
  outputOption,
  TABLE_OR_JSON,
  TEXT_OR_JSON,
} from "../options.js";
import { ProgressWriter } from "../progress.js";
import { labelled } from "./schedules.js";

interface BackfillOptions {
  from?: string;
  to?: string;
  cron?: string;
  timezone?: string;
  date?: string[];
  mode?: "SERIAL" | "PARALLEL";
  parallelism?: number;
  order?: string;
  priority?: string;
  param?: Record<string, string>;
  failureStrategy?: string;
  dryRun?: boolean;
  wait?: boolean;
}

/** The backfill actions: the API's verbs (lib/api/backfills.ts TRANSITIONS). */
const ACTIONS: ReadonlyArray<{ verb: string; description: string }> = [
  { verb: "pause", description: "pause a backfill: running instances finish, no new ones start" },
  { verb: "resume", description: "resume a paused backfill where it stopped" },
  {
    verb: "cancel",
    description: "cancel a backfill for good: running instances finish, no new ones start",
  },
];

/** Registers `backfill` (start one) and `backfills [list]|get|pause|resume|cancel`. */
export function registerBackfills(program: Command, ctx: CliContext): void {
  program
    .command("backfill")
    .description(
      "run a workflow at past nominal times (--from/--to along a cron, or --date…) and print the backfill id",
    )
    .argument("<workflow>", "workflow name")
    .option("--from <iso>", "first instant of the range (inclusive)", isoInstant)
    .option("--to <iso>", "last instant of the range (inclusive)", isoInstant)
    .option(
      "--cron <expr>",
      "nominal times of the range (default: the cron of the workflow's schedule)",
    )
    .option(
      "--timezone <zone>",
      "IANA zone of --cron, and of the runs' time parameters (default UTC; with --date: only the latter)",
    )
    .option(
      "--date <iso>",
      "one nominal time instead of a range (repeatable or comma-separated)",
      isoList,
    )
    .addOption(
      choiceOption(
        "--mode <mode>",
        "one after the other, or several at once (parallel; implied by --parallelism)",
        ["SERIAL", "PARALLEL"] as const,
        { api: "SERIAL" },
      ),
    )
    .option("--parallelism <n>", "PARALLEL: runs at once (1..100, default 2)", intIn(1, 100))
    .addOption(
      choiceOption("--order <order>", "oldest first, or newest first", ["ASC", "DESC"] as const, {
        api: "ASC",
      }),
    )
    .addOption(choiceOption("--priority <priority>", "run priority", PRIORITIES, { api: "LOW" }))
    .option("-p, --param <key=value>", "parameter of every run (repeatable)", keyValue)
    .addOption(
      choiceOption(
        "--failure-strategy <strategy>",
        "after a task fails for good",
        FAILURE_STRATEGIES,
      ),
    )
    .option("--dry-run", "print the nominal times it would run; start nothing")
    .option("-w, --wait", "wait until it ends, showing progress; exit 0 only on SUCCESS")
    .action(async (workflow: string, opts: BackfillOptions) => {
      const body = backfillBody(opts);
      const path = `/v1/workflows/${seg(workflow)}/backfill`;
      if (opts.dryRun) {
        const res = await ctx.api().post<BackfillDryRun>(path, body, BACKFILL_FLAGS);
        const times = res.body.nominalTimes ?? [];
        for (const t of times) ctx.out(formatTime(t));
        ctx.io.stderr.write(
          `${times.length} nominal time${times.length === 1 ? "" : "s"} (dry run: nothing started)\n`,
        );
        return;
      }
      const res = await ctx.api().post<Backfill>(path, body, BACKFILL_FLAGS);
      // The id first, even with --wait, so it can be paused or cancelled meanwhile.
      ctx.out(res.body.id);
      if (opts.wait) ctx.exitCode = await waitForBackfill(ctx, res.body);
    });

  const backfills = program
    .command("backfills")
    .description("list backfills (the default), or show, pause, resume or cancel one");

  backfills
    .command("list", { isDefault: true })
    .description("list backfills, newest first")
    .option("--workflow <name>", "only backfills of this workflow")
    .addOption(choiceOption("--state <state>", "only backfills in this state", BACKFILL_STATES))
    .option("--limit <n>", "at most this many backfills", intIn(1, 100_000), 50)
    .addOption(outputOption(TABLE_OR_JSON))
    .action(async (opts: ListOptions) => {
      const { items, nextToken } = await fetchBackfills(ctx, opts);
      if (opts.output === "JSON") {
        ctx.out(toJson(nextToken ? { items, nextToken } : { items }));
        return;
      }
      if (items.length === 0) {
        ctx.io.stderr.write(
          "no backfills (start one with: shoal backfill WORKFLOW --from ISO --to ISO)\n",
        );
        return;
      }
      ctx.out(table(BACKFILL_HEADERS, items.map(backfillCells)));
      if (nextToken) ctx.io.stderr.write("(more backfills: raise --limit)\n");
    });

  backfills
    .command("get")
    .description("show one backfill and its progress")
    .argument("<id>", "backfill id")
    .addOption(outputOption(TEXT_OR_JSON))
    .action(async (id: string, opts: { output: string }) => {
      const b = await ctx.api().get<Backfill>(`/v1/backfills/${seg(id)}`);
      if (opts.output === "JSON") {
        ctx.out(toJson(b));
        return;
      }
      for (const line of describeBackfill(b)) ctx.out(line);
    });

  for (const { verb, description } of ACTIONS) {
    backfills
      .command(verb)
      .description(description)
      .argument("<id>", "backfill id")
      .action(async (id: string) => {
        const res = await ctx.api().post<Backfill>(`/v1/backfills/${seg(id)}/${verb}`);
        ctx.out(`${res.body.id} ${res.body.state}`);
      });
  }
}

/** Fields of the backfill body (lib/api/backfills.ts backfillSchema) and the flags that fill them. */
const BACKFILL_FLAGS: FlagMap = {
  from: "--from",
  to: "--to",
  dates: "--date",
  cron: "--cron",
  timezone: "--timezone",
  mode: "--mode",
  parallelism: "--parallelism",
  order: "--order",
  priority: "--priority",
  params: "--param",
  failureStrategy: "--failure-strategy",
};

/** States of a backfill (lib/store/schedules.ts BackfillState), for `backfills --state`. */
const BACKFILL_STATES = ["RUNNING", "PAUSED", "CANCELLED", "SUCCESS", "FAILURE"] as const;

/** The API's largest page (lib/api/http.ts parseLimit). */
const PAGE_LIMIT = 200;

interface ListOptions {
  workflow?: string;
  state?: string;
  limit: number;
  output: string;
}

/** Backfills matching `opts`, newest first, and the token for more when the limit cut them off. */
async function fetchBackfills(
  ctx: CliContext,
  opts: ListOptions,
): Promise<{ items: Backfill[]; nextToken?: string }> {
  const items: Backfill[] = [];
  let nextToken: string | undefined;
  do {
    // With --state a page may come back short (the API filters each page): keep following.
    const page = await ctx.api().get<Page<Backfill>>("/v1/backfills", {
      workflow: opts.workflow,
      state: opts.state,
      limit: Math.min(PAGE_LIMIT, opts.limit - items.length),
      nextToken,
    });
    items.push(...(page.items ?? []));
    nextToken = page.nextToken;
  } while (nextToken && items.length < opts.limit);
  return nextToken ? { items, nextToken } : { items };
}

/** Column headers of `shoal backfills`. */
const BACKFILL_HEADERS = ["ID", "WORKFLOW", "STATE", "MODE", "DONE", "NOMINAL TIMES", "CREATED"];

/** One row of `shoal backfills`, matching {@link BACKFILL_HEADERS}. */
function backfillCells(b: Backfill): string[] {
  return [
    b.id,
    b.workflow,
    b.state,
    b.mode === "PARALLEL" ? `PARALLEL(${b.parallelism})` : b.mode,
    `${b.done}/${b.total}`,
    nominalRange(b),
    formatTime(b.createdAt),
  ];
}

/** `2026-01-01T00:00:00Z … 2026-01-31T00:00:00Z`, earliest first whatever the run order. */
function nominalRange(b: Backfill): string {
  const times = [b.firstTime, b.lastTime].filter((t): t is string => t !== undefined).sort();
  if (times.length === 0) return "-";
  const [first, last] = [times[0], times[times.length - 1]];
  return first === last ? formatTime(first) : `${formatTime(first)} … ${formatTime(last)}`;
}

/** Repeatable `--date`: each value one instant or several comma-separated ones. */
function isoList(value: string, previous: string[] = []): string[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return [...previous, ...items.map(isoInstant)];
}

/**
 * The body of `POST /v1/workflows/{name}/backfill` from the options: only what was given, so
 * the API's defaults apply to the rest.
 * @throws UsageError when the options contradict each other (a range and dates, half a range,
 * --cron with dates, --parallelism with SERIAL, --wait with --dry-run) or the cron / zone is
 * invalid by the API's rules (checkTiming).
 */
function backfillBody(opts: BackfillOptions): Record<string, unknown> {
  const range = opts.from !== undefined || opts.to !== undefined;
  if (opts.date && range) throw new UsageError("give either --date or --from/--to, not both");
  if (!opts.date && !range) {
    throw new UsageError("give the nominal times: --from ISO --to ISO, or --date ISO…");
  }
  if (range && (opts.from === undefined || opts.to === undefined)) {
    throw new UsageError(`${opts.from === undefined ? "--from" : "--to"} is required with a range`);
  }
  if (opts.from !== undefined && opts.to !== undefined && opts.to < opts.from) {
    throw new UsageError("--to must not be before --from");
  }
  if (opts.date && opts.cron !== undefined) {
    throw new UsageError("--cron picks times in a range; --date gives them itself");
  }
  // With --date, --timezone is the zone of the runs' time parameters.
  if (opts.timezone !== undefined && opts.cron === undefined && !opts.date) {
    // Without --cron the API takes the schedule's cron together with the schedule's zone.
    throw new UsageError("--timezone applies to --cron; give both or neither");
  }
  if (opts.cron !== undefined) {
    const problems = checkTiming({ cron: opts.cron, timezone: opts.timezone ?? "UTC" });
    if (problems.length > 0) {
      throw new UsageError(
        problems
          .map((p) => `${p.path === "cron" ? "--cron" : "--timezone"}: ${p.message}`)
          .join("; "),
      );
    }
  }
  let mode = opts.mode;
  if (opts.parallelism !== undefined) {
    if (mode === "SERIAL") throw new UsageError("--parallelism needs --mode PARALLEL");
    // Asking for parallelism means PARALLEL: the API would silently run SERIAL otherwise.
    mode = "PARALLEL";
  }
  if (opts.dryRun && opts.wait) throw new UsageError("--dry-run starts nothing to --wait for");

  const body: Record<string, unknown> = {};
  if (opts.date) body.dates = opts.date;
  if (opts.from !== undefined) body.from = opts.from;
  if (opts.to !== undefined) body.to = opts.to;
  if (opts.cron !== undefined) body.cron = opts.cron;
  if (opts.timezone !== undefined) body.timezone = opts.timezone;
  if (mode) body.mode = mode;
  if (opts.parallelism !== undefined) body.parallelism = opts.parallelism;
  if (opts.order) body.order = opts.order;
  if (opts.priority) body.priority = opts.priority;
  if (opts.param) body.params = opts.param;
  if (opts.failureStrategy) body.failureStrategy = opts.failureStrategy;
  if (opts.dryRun) body.dryRun = true;
  return body;
}

/**
 * `RUNNING  3/24 done, 2 running, 1 failed, 18 pending`: the API's counts of nominal times
 * (`running` is the API's own field: runs started and not finished), in the style of an
 * instance's progress line (progress.ts).
 */
function backfillProgress(b: Backfill): string {
  return `${b.state}  ${b.done}/${b.total} done, ${b.running} running, ${b.failed} failed, ${b.pending} pending`;
}

/**
 * Shows progress from `started` on, polling `GET /v1/backfills/{id}` every POLL_INTERVAL_MS
 * until SUCCESS, FAILURE or CANCELLED (a PAUSED backfill may be resumed, so the wait goes on).
 * Returns the exit code: 0 only for SUCCESS.
 */
async function waitForBackfill(ctx: CliContext, started: Backfill): Promise<number> {
  const progress = new ProgressWriter(ctx.io.stdout);
  let b = started;
  for (;;) {
    progress.update(backfillProgress(b));
    if (TERMINAL_BACKFILL_STATES.has(b.state)) break;
    await sleep(POLL_INTERVAL_MS);
    b = await ctx.api().get<Backfill>(`/v1/backfills/${seg(started.id)}`);
  }
  progress.finish();
  ctx.out(`${b.state} in ${durationBetween(b.createdAt, b.updatedAt)}`);
  if (b.failed > 0) {
    ctx.out(
      `${b.failed} run${b.failed === 1 ? "" : "s"} failed (see: shoal instances --workflow ${b.workflow} --state FAILURE)`,
    );
  }
  return b.state === "SUCCESS" ? EXIT.ok : EXIT.error;
}

/** The text form of `shoal backfills get`: one `label: value` line per field. */
export function describeBackfill(b: Backfill): string[] {
  return labelled([
    ["id", b.id],
    ["workflow", b.workflow],
    ["state", b.state],
    ["mode", b.mode === "PARALLEL" ? `PARALLEL (${b.parallelism} at once)` : b.mode],
    ["priority", b.priority],
    ["done", `${b.done}/${b.total}`],
    ["running", String(b.running)],
    ["failed", String(b.failed)],
    ["pending", String(b.pending)],
    ["times", b.firstTime === undefined ? undefined : nominalRange(b)],
    ["created", formatTime(b.createdAt)],
    ["updated", formatTime(b.updatedAt)],
  ]);
}

/**
 * `shoal backfill WORKFLOW` and `shoal backfills get|pause|resume|cancel`: runs of a workflow at
 * past nominal times — DolphinScheduler's "complement data", SERIAL or PARALLEL — over
 * `POST /v1/workflows/{name}/backfill` and `/v1/backfills/{id}` (lib/api/backfills.ts). The
 * API runs them LOW priority by default, so live runs go first.
 */
import type { Command } from "commander";
import { FAILURE_STRATEGIES, PRIORITIES } from "../../core/model.js";
import { checkTiming } from "../../core/schedule-time.js";
import { type Backfill, type BackfillDryRun, TERMINAL_BACKFILL_STATES } from "../api-types.js";
import { type CliContext, POLL_INTERVAL_MS, sleep } from "../context.js";
import { EXIT, UsageError } from "../errors.js";
import { durationBetween, formatTime, toJson } from "../format.js";
import { seg } from "../http.js";
import { intIn, keyValue, oneOf } from "../options.js";
import { ProgressWriter } from "../progress.js";
import { isoInstant, labelled } from "./schedules.js";

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

/** Registers `backfill` (start one) and `backfills get|pause|resume|cancel`. */
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
    .option("--timezone <zone>", "IANA zone of --cron (default UTC)")
    .option(
      "--date <iso>",
      "one nominal time instead of a range (repeatable or comma-separated)",
      isoList,
    )
    .option(
      "--mode <mode>",
      "SERIAL (one after the other) or PARALLEL (default SERIAL; PARALLEL with --parallelism)",
      oneOf(["SERIAL", "PARALLEL"] as const),
    )
    .option("--parallelism <n>", "PARALLEL: runs at once (1..100, default 2)", intIn(1, 100))
    .option(
      "--order <order>",
      "ASC (oldest first, default) or DESC",
      oneOf(["ASC", "DESC"] as const),
    )
    .option(
      "--priority <priority>",
      `run priority: ${PRIORITIES.join(", ")} (default LOW)`,
      oneOf(PRIORITIES),
    )
    .option("-p, --param <key=value>", "parameter of every run (repeatable)", keyValue)
    .option(
      "--failure-strategy <strategy>",
      `after a task fails for good: ${FAILURE_STRATEGIES.join(", ")}`,
      oneOf(FAILURE_STRATEGIES),
    )
    .option("--dry-run", "print the nominal times it would run; start nothing")
    .option("-w, --wait", "wait until it ends, showing progress; exit 0 only on SUCCESS")
    .action(async (workflow: string, opts: BackfillOptions) => {
      const body = backfillBody(opts);
      const path = `/v1/workflows/${seg(workflow)}/backfill`;
      if (opts.dryRun) {
        const res = await ctx.api().post<BackfillDryRun>(path, body);
        const times = res.body.nominalTimes ?? [];
        for (const t of times) ctx.out(formatTime(t));
        ctx.io.stderr.write(
          `${times.length} nominal time${times.length === 1 ? "" : "s"} (dry run: nothing started)\n`,
        );
        return;
      }
      const res = await ctx.api().post<Backfill>(path, body);
      // The id first, even with --wait, so it can be paused or cancelled meanwhile.
      ctx.out(res.body.id);
      if (opts.wait) ctx.exitCode = await waitForBackfill(ctx, res.body);
    });

  const backfills = program
    .command("backfills")
    .description("show, pause, resume or cancel one backfill");

  backfills
    .command("get")
    .description("show one backfill and its progress")
    .argument("<id>", "backfill id")
    .option("-o, --output <format>", "text or json", oneOf(["TEXT", "JSON"] as const), "TEXT")
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
  if (opts.date && (opts.cron !== undefined || opts.timezone !== undefined)) {
    throw new UsageError("--cron and --timezone pick times in a range; --date gives them itself");
  }
  if (opts.timezone !== undefined && opts.cron === undefined) {
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

/** `RUNNING  3/24 done  2 running  1 failed  18 pending` */
function backfillProgress(b: Backfill): string {
  return `${b.state}  ${b.done}/${b.total} done  ${b.running} running  ${b.failed} failed  ${b.pending} pending`;
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
    ["created", formatTime(b.createdAt)],
    ["updated", formatTime(b.updatedAt)],
  ]);
}

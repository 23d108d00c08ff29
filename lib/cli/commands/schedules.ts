/**
 * `shoal schedules` and `shoal schedule create|get|preview|fires|online|offline|delete`: the
 * timed side of Shoal (DolphinScheduler's schedules, run on Quartz there; a sweeper here), over
 * `/v1/schedules` (lib/api/schedules.ts). Timing is checked here with the API's own rules
 * (lib/core/schedule-time.ts) so a bad cron is a usage error before any request.
 */
import { type Command, InvalidArgumentError } from "commander";
import { DateTime } from "luxon";
import { FAILURE_STRATEGIES, PRIORITIES } from "../../core/model.js";
import { checkTiming } from "../../core/schedule-time.js";
import type { Page, Schedule, ScheduleFire, SchedulePreview } from "../api-types.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../errors.js";
import { formatDuration, formatTime, oneLine, table, toJson } from "../format.js";
import { seg } from "../http.js";
import { printList } from "../list-output.js";
import { intIn, keyValue, oneOf } from "../options.js";

/** The API's largest page (lib/api/http.ts parseLimit). */
const PAGE_LIMIT = 200;

/** Quartz-named misfire policies (lib/store/schedules.ts MisfirePolicy). */
const MISFIRE_POLICIES = ["SKIP", "FIRE_ONCE", "FIRE_ALL"] as const;
/** What a fire does while the previous run still goes (lib/store/schedules.ts OverlapPolicy). */
const OVERLAP_POLICIES = ["PARALLEL", "SERIAL_WAIT", "SERIAL_DISCARD", "SERIAL_PRIORITY"] as const;

/** Default of `schedule fires --limit`. */
const DEFAULT_FIRES_LIMIT = 100;

const TABLE_OR_JSON = ["TABLE", "JSON"] as const;
const TEXT_OR_JSON = ["TEXT", "JSON"] as const;

interface CreateOptions {
  cron?: string;
  rate?: string;
  at?: string;
  timezone?: string;
  start?: string;
  end?: string;
  param?: Record<string, string>;
  priority?: string;
  failureStrategy?: string;
  workerGroup?: string;
  misfire?: string;
  misfireThreshold?: number;
  maxCatchup?: number;
  overlap?: string;
  offline?: boolean;
}

interface FiresOptions {
  from?: string;
  to?: string;
  limit: number;
  output: string;
}

/** Registers `schedules` (list) and `schedule create|get|preview|fires|online|offline|delete`. */
export function registerSchedules(program: Command, ctx: CliContext): void {
  program
    .command("schedules")
    .description("list schedules, newest first")
    .option("--workflow <name>", "only schedules of this workflow")
    .option("-o, --output <format>", "table or json", oneOf(TABLE_OR_JSON), "TABLE")
    .action(async (opts: { workflow?: string; output: string }) => {
      const items = await ctx.api().getAll<Schedule>("/v1/schedules", {
        workflow: opts.workflow,
      });
      printList(ctx, items, opts.output, {
        empty: "no schedules (create one with: shoal schedule create WORKFLOW --cron EXPR)",
        headers: ["ID", "WORKFLOW", "EXPRESSION", "TZ", "STATE", "NEXT FIRE", "OVERLAP"],
        row: (s) => [
          s.id,
          s.workflow,
          expressionOf(s),
          s.timezone,
          s.state,
          formatTime(s.nextFireTime),
          s.overlapPolicy,
        ],
      });
    });

  const schedule = program
    .command("schedule")
    .description("create, show, preview, switch or delete one schedule");

  schedule
    .command("create")
    .description("schedule a workflow (exactly one of --cron, --rate, --at) and print its id")
    .argument("<workflow>", "workflow name")
    .option("--cron <expr>", "cron: 5 fields, or 6 with seconds first, in --timezone")
    .option("--rate <interval>", 'fixed interval, e.g. "5 minutes" (seconds|minutes|hours|days)')
    .option("--at <iso>", "fire once at this instant", isoInstant)
    .option("--timezone <zone>", "IANA zone of --cron, e.g. Europe/Paris (default UTC)")
    .option("--start <iso>", "no fire before this instant", isoInstant)
    .option("--end <iso>", "no fire after this instant", isoInstant)
    .option("-p, --param <key=value>", "parameter of every run (repeatable)", keyValue)
    .option("--priority <priority>", `run priority: ${PRIORITIES.join(", ")}`, oneOf(PRIORITIES))
    .option(
      "--failure-strategy <strategy>",
      `after a task fails for good: ${FAILURE_STRATEGIES.join(", ")}`,
      oneOf(FAILURE_STRATEGIES),
    )
    .option("--worker-group <group>", "worker group of the runs' tasks")
    .option(
      "--misfire <policy>",
      `fires found late: ${MISFIRE_POLICIES.join(", ")} (default FIRE_ONCE)`,
      oneOf(MISFIRE_POLICIES),
    )
    .option(
      "--misfire-threshold <seconds>",
      "a fire later than this is a misfire (0..86400, default 60)",
      intIn(0, 86_400),
    )
    .option(
      "--max-catchup <n>",
      "FIRE_ALL: most missed times fired at once (1..1000, default 100)",
      intIn(1, 1_000),
    )
    .option(
      "--overlap <policy>",
      `while the previous run goes: ${OVERLAP_POLICIES.join(", ")} (default PARALLEL)`,
      oneOf(OVERLAP_POLICIES),
    )
    .option("--offline", "create it OFFLINE (start it later with: shoal schedule online ID)")
    .action(async (workflow: string, opts: CreateOptions) => {
      const body = createBody(workflow, opts);
      const res = await ctx.api().post<Schedule>("/v1/schedules", body);
      // The id alone on the first line, so `| head -1` captures it.
      ctx.out(res.body.id);
      ctx.out(`next fire: ${nextFire(res.body)}`);
    });

  schedule
    .command("get")
    .description("show one schedule")
    .argument("<id>", "schedule id")
    .option("-o, --output <format>", "text or json", oneOf(TEXT_OR_JSON), "TEXT")
    .action(async (id: string, opts: { output: string }) => {
      const s = await ctx.api().get<Schedule>(`/v1/schedules/${seg(id)}`);
      if (opts.output === "JSON") {
        ctx.out(toJson(s));
        return;
      }
      for (const line of describeSchedule(s)) ctx.out(line);
    });

  schedule
    .command("preview")
    .description("print the next nominal fire times, with the local time in the schedule's zone")
    .argument("<id>", "schedule id")
    .option("--count <n>", "how many (1..1000, default 10)", intIn(1, 1_000))
    .option("-o, --output <format>", "text or json", oneOf(TEXT_OR_JSON), "TEXT")
    .action(async (id: string, opts: { count?: number; output: string }) => {
      // The schedule first: its zone, and a clean 404 before the preview is asked for.
      const s = await ctx.api().get<Schedule>(`/v1/schedules/${seg(id)}`);
      const preview = await ctx
        .api()
        .get<SchedulePreview>(`/v1/schedules/${seg(id)}/preview`, { count: opts.count });
      const items = preview.items ?? [];
      if (opts.output === "JSON") {
        ctx.out(toJson({ items }));
        return;
      }
      if (items.length === 0) {
        ctx.io.stderr.write(`no further fire time (schedule ${s.id} is exhausted)\n`);
        return;
      }
      for (const t of items) ctx.out(`${formatTime(t)}  ${localTime(t, s.timezone)}`);
    });

  schedule
    .command("fires")
    .description("list the fire ledger (what happened at each nominal time), oldest first")
    .argument("<id>", "schedule id")
    .option("--from <iso>", "nominal times from this instant (inclusive)", isoInstant)
    .option("--to <iso>", "nominal times up to this instant (inclusive)", isoInstant)
    .option(
      "--limit <n>",
      `at most this many fires (default ${DEFAULT_FIRES_LIMIT})`,
      intIn(1, 100_000),
      DEFAULT_FIRES_LIMIT,
    )
    .option("-o, --output <format>", "table or json", oneOf(TABLE_OR_JSON), "TABLE")
    .action(async (id: string, opts: FiresOptions) => {
      const items: ScheduleFire[] = [];
      let nextToken: string | undefined;
      do {
        const page = await ctx.api().get<Page<ScheduleFire>>(`/v1/schedules/${seg(id)}/fires`, {
          from: opts.from,
          to: opts.to,
          limit: Math.min(PAGE_LIMIT, opts.limit - items.length),
          nextToken,
        });
        items.push(...(page.items ?? []));
        nextToken = page.nextToken;
      } while (nextToken && items.length < opts.limit);

      if (opts.output === "JSON") {
        ctx.out(toJson(nextToken ? { items, nextToken } : { items }));
        return;
      }
      if (items.length === 0) {
        ctx.io.stderr.write(`no fires recorded for schedule ${id}\n`);
        return;
      }
      const rows = items.map((f) => [
        formatTime(f.nominalTime),
        formatTime(f.actualTime),
        formatDuration(f.latenessMs),
        f.decision,
        f.instanceId ?? "-",
      ]);
      ctx.out(table(["NOMINAL", "ACTUAL", "LATENESS", "DECISION", "INSTANCE"], rows));
      if (nextToken) {
        ctx.io.stderr.write(`(more fires: raise --limit or narrow with --from/--to)\n`);
      }
    });

  for (const state of ["online", "offline"] as const) {
    schedule
      .command(state)
      .description(
        state === "online"
          ? "put a schedule ONLINE: it fires from now on (the paused times are not caught up)"
          : "put a schedule OFFLINE: it stops firing (running instances go on)",
      )
      .argument("<id>", "schedule id")
      .action(async (id: string) => {
        const res = await ctx.api().post<Schedule>(`/v1/schedules/${seg(id)}/${state}`);
        const s = res.body;
        ctx.out(
          s.state === "ONLINE"
            ? `${s.id} ONLINE (next fire: ${nextFire(s)})`
            : `${s.id} ${s.state}`,
        );
      });
  }

  schedule
    .command("delete")
    .description("delete a schedule (instances it started are kept)")
    .argument("<id>", "schedule id")
    .action(async (id: string) => {
      await ctx.api().delete(`/v1/schedules/${seg(id)}`);
      ctx.out(`${id} deleted`);
    });
}

/**
 * The body of `POST /v1/schedules` from `schedule create`'s options: only what was given, so the
 * API's defaults apply to the rest.
 * @throws UsageError without exactly one of --cron/--rate/--at, or when the timing is invalid by
 * the API's rules (checkTiming): a cron no date matches, an unknown zone, --end before --start…
 */
function createBody(workflow: string, opts: CreateOptions): Record<string, unknown> {
  const given = (["cron", "rate", "at"] as const).filter((k) => opts[k] !== undefined);
  if (given.length !== 1) {
    throw new UsageError(
      given.length === 0
        ? "give when it fires: one of --cron, --rate or --at"
        : `give only one of --cron, --rate or --at (got ${given.map((k) => `--${k}`).join(", ")})`,
    );
  }
  const ms = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));
  const problems = checkTiming({
    cron: opts.cron,
    rate: opts.rate,
    at: ms(opts.at),
    timezone: opts.timezone ?? "UTC",
    startTime: ms(opts.start),
    endTime: ms(opts.end),
  });
  if (problems.length > 0) {
    throw new UsageError(
      problems.map((p) => `${TIMING_OPTIONS[p.path] ?? p.path}: ${p.message}`).join("; "),
    );
  }
  const body: Record<string, unknown> = { workflow };
  if (opts.cron !== undefined) body.cron = opts.cron;
  if (opts.rate !== undefined) body.rate = opts.rate;
  if (opts.at !== undefined) body.at = opts.at;
  if (opts.timezone !== undefined) body.timezone = opts.timezone;
  if (opts.start !== undefined) body.startTime = opts.start;
  if (opts.end !== undefined) body.endTime = opts.end;
  if (opts.param) body.params = opts.param;
  if (opts.priority) body.priority = opts.priority;
  if (opts.failureStrategy) body.failureStrategy = opts.failureStrategy;
  if (opts.workerGroup !== undefined) body.workerGroup = opts.workerGroup;
  if (opts.misfire) body.misfirePolicy = opts.misfire;
  if (opts.misfireThreshold !== undefined) body.misfireThresholdSeconds = opts.misfireThreshold;
  if (opts.maxCatchup !== undefined) body.maxCatchup = opts.maxCatchup;
  if (opts.overlap) body.overlapPolicy = opts.overlap;
  if (opts.offline) body.state = "OFFLINE";
  return body;
}

/** checkTiming's field paths as the options that set them. */
const TIMING_OPTIONS: Record<string, string> = {
  cron: "--cron",
  rate: "--rate",
  at: "--at",
  timezone: "--timezone",
  startTime: "--start",
  endTime: "--end",
};

/** `2026-11-21T05:00:00Z (2026-11-21 06:00:00 +01:00 Europe/Paris)`, or why there is none. */
function nextFire(s: Schedule): string {
  if (s.nextFireTime === undefined) {
    return s.state === "ONLINE"
      ? "none (no further fire time)"
      : `none (${s.state}; start it with: shoal schedule online ${s.id})`;
  }
  return `${formatTime(s.nextFireTime)} (${localTime(s.nextFireTime, s.timezone)})`;
}

/** How the schedule is timed, EventBridge Scheduler style: `cron(…)`, `rate(…)` or `at(…)`. */
function expressionOf(s: Schedule): string {
  if (s.cron !== undefined) return `cron(${s.cron})`;
  if (s.rate !== undefined) return `rate(${s.rate})`;
  if (s.at !== undefined) return `at(${formatTime(s.at)})`;
  return "-";
}

/**
 * An instant on the wall clock of an IANA `zone`, with the offset and the zone's name:
 * `2026-11-21 06:00:00 +01:00 Europe/Paris`. The offset makes a DST-repeated hour unambiguous.
 * Returns `-` for an unparsable instant or unknown zone (luxon's zone data, as the API's).
 */
export function localTime(iso: string, zone: string): string {
  const t = DateTime.fromISO(iso, { zone });
  return t.isValid ? `${t.toFormat("yyyy-LL-dd HH:mm:ss ZZ")} ${zone}` : "-";
}

/** The text form of `shoal schedule get`: one `label: value` line per field that is set. */
export function describeSchedule(s: Schedule): string[] {
  const fields: Array<[string, string | undefined]> = [
    ["id", s.id],
    ["workflow", s.workflow],
    ["cron", s.cron],
    ["rate", s.rate],
    ["at", s.at === undefined ? undefined : formatTime(s.at)],
    ["timezone", s.timezone],
    ["start", s.startTime === undefined ? undefined : formatTime(s.startTime)],
    ["end", s.endTime === undefined ? undefined : formatTime(s.endTime)],
    ["state", s.state],
    ["next fire", nextFire(s)],
    ["misfire", `${s.misfirePolicy} (late by more than ${s.misfireThresholdSeconds}s)`],
    ["max catch-up", String(s.maxCatchup)],
    ["overlap", s.overlapPolicy],
    ["priority", s.priority],
    ["failure strategy", s.failureStrategy],
    ["worker group", s.workerGroup],
    ["params", formatParams(s.params)],
    ["queued", s.queued?.length ? s.queued.map((q) => formatTime(q)).join(", ") : undefined],
    ["created", formatTime(s.createdAt)],
    ["updated", formatTime(s.updatedAt)],
  ];
  return labelled(fields);
}

/** `k=v, k2=v2` on one line, or undefined when there are none. */
export function formatParams(params: Record<string, string> | undefined): string | undefined {
  const entries = Object.entries(params ?? {});
  if (entries.length === 0) return undefined;
  return oneLine(entries.map(([k, v]) => `${k}=${v}`).join(", "), 200);
}

/**
 * `label: value` lines with the values aligned (as `shoal task-group get`); fields whose value
 * is undefined are left out.
 */
export function labelled(fields: ReadonlyArray<[string, string | undefined]>): string[] {
  const set = fields.filter((f): f is [string, string] => f[1] !== undefined);
  const width = Math.max(...set.map(([label]) => label.length)) + 1;
  return set.map(([label, value]) => `${`${label}:`.padEnd(width)} ${value}`);
}

/**
 * Option parser for an ISO-8601 instant with a zone (`Z` or `±hh:mm`), returned normalised to
 * UTC (`2026-01-01T00:00:00.000Z`) — the API's instant format (zod `iso.datetime({offset})`).
 * A time without a zone is refused: JavaScript would read it in the machine's local zone.
 * @throws InvalidArgumentError (a usage error, exit 2) for anything else.
 */
export function isoInstant(value: string): string {
  const t = Date.parse(value);
  if (!ISO_INSTANT.test(value.trim()) || Number.isNaN(t)) {
    throw new InvalidArgumentError(
      "must be an ISO-8601 instant with a zone, e.g. 2026-01-01T00:00:00Z.",
    );
  }
  return new Date(t).toISOString();
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

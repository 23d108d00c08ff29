/**
 * `shoal schedules` and `shoal schedule create|update|get|preview|fires|online|offline|delete`:
 * the timed side of Shoal (DolphinScheduler's schedules, run on Quartz there; a sweeper here),
 * over `/v1/schedules` (lib/api/schedules.ts). Their flags and bodies: lib/cli/schedule-options.ts.
 */
import type { Command } from "commander";
import { DateTime } from "luxon";
import type {
  Page,
  Schedule,
  ScheduleFire,
  SchedulePreview,
  ScheduleWritten,
} from "../api-types.js";
import type { CliContext } from "../context.js";
import { formatDuration, formatTime, oneLine, table, toJson } from "../format.js";
import { seg } from "../http.js";
import { printList } from "../list-output.js";
import { intIn, isoInstant, outputOption, TABLE_OR_JSON, TEXT_OR_JSON } from "../options.js";
import {
  addScheduleOptions,
  createBody,
  SCHEDULE_FLAGS,
  type ScheduleOptions,
  updateBody,
} from "../schedule-options.js";

/** The API's largest page (lib/api/http.ts parseLimit). */
const PAGE_LIMIT = 200;

/** Default of `schedule fires --limit`. */
const DEFAULT_FIRES_LIMIT = 100;

interface FiresOptions {
  from?: string;
  to?: string;
  limit: number;
  output: string;
}

/** Registers `schedules` (list) and `schedule create|update|get|preview|fires|online|offline|delete`. */
export function registerSchedules(program: Command, ctx: CliContext): void {
  program
    .command("schedules")
    .description("list schedules, newest first")
    .option("--workflow <name>", "only schedules of this workflow")
    .addOption(outputOption(TABLE_OR_JSON))
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

  addScheduleOptions(
    schedule
      .command("create")
      .description("schedule a workflow (exactly one of --cron, --rate, --at) and print its id")
      .argument("<workflow>", "workflow name"),
    true,
  )
    .option("--offline", "create it OFFLINE (start it later with: shoal schedule online ID)")
    .action(async (workflow: string, opts: ScheduleOptions & { offline?: boolean }) => {
      const body = createBody(workflow, opts);
      const res = await ctx.api().post<ScheduleWritten>("/v1/schedules", body, SCHEDULE_FLAGS);
      // The id alone on the first line, so `| head -1` captures it.
      ctx.out(res.body.id);
      ctx.out(`next fire: ${nextFire(res.body)}`);
      printWarnings(ctx, res.body);
    });

  addScheduleOptions(
    schedule
      .command("update")
      .description(
        "change a schedule: only the options given change (a new --cron, --rate or --at replaces the timing); prints it as `schedule get` does",
      )
      .argument("<id>", "schedule id"),
    false,
  ).action(async (id: string, opts: ScheduleOptions) => {
    const path = `/v1/schedules/${seg(id)}`;
    // PUT replaces every setting: read the schedule, change what was given, send it whole.
    const current = await ctx.api().get<Schedule>(path);
    const res = await ctx
      .api()
      .put<ScheduleWritten>(path, updateBody(current, opts), SCHEDULE_FLAGS);
    for (const line of describeSchedule(res.body)) ctx.out(line);
    printWarnings(ctx, res.body);
  });

  schedule
    .command("get")
    .description("show one schedule")
    .argument("<id>", "schedule id")
    .addOption(outputOption(TEXT_OR_JSON))
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
    .addOption(outputOption(TEXT_OR_JSON))
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
    .addOption(outputOption(TABLE_OR_JSON))
    .action(async (id: string, opts: FiresOptions) => {
      const items: ScheduleFire[] = [];
      let nextToken: string | undefined;
      let deleted = false;
      do {
        const page = await ctx
          .api()
          .get<Page<ScheduleFire> & { scheduleDeleted?: boolean }>(
            `/v1/schedules/${seg(id)}/fires`,
            {
              from: opts.from,
              to: opts.to,
              limit: Math.min(PAGE_LIMIT, opts.limit - items.length),
              nextToken,
            },
          );
        items.push(...(page.items ?? []));
        nextToken = page.nextToken;
        deleted ||= page.scheduleDeleted === true;
      } while (nextToken && items.length < opts.limit);
      // The ledger outlives its schedule (an audit record): say whose it is.
      if (deleted && opts.output !== "JSON") {
        ctx.io.stderr.write(`schedule ${id} was deleted; its fire ledger is kept\n`);
      }

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
    ["alerts", formatAlerts(s.alerts)],
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

/** `FAILURE, TIMEOUT → ops, oncall; SUCCESS → audit`, or undefined when there are no rules. */
export function formatAlerts(rules: Schedule["alerts"]): string | undefined {
  if (!rules?.length) return undefined;
  return oneLine(rules.map((r) => `${r.on.join(", ")} → ${r.channels.join(", ")}`).join("; "), 200);
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

/** The answer's warnings (an alert rule's channel the deployment lacks), under the flag that set it. */
function printWarnings(ctx: CliContext, s: ScheduleWritten): void {
  for (const w of s.warnings ?? []) {
    const where = w.path.startsWith("alerts") ? `--alerts ${w.path}` : w.path;
    ctx.io.stderr.write(`warning: ${where}: ${w.message}\n`);
  }
}

/**
 * `shoal triggers`, `shoal trigger create|get|online|offline|delete` and `shoal events put`: event triggers
 * start a workflow run for each event matching an EventBridge event pattern, with parameters
 * taken from the event by JSONPath (lib/api/triggers.ts). `events put` sends one event the way
 * EventBridge PutEvents does (`POST /v1/events`, standalone's stand-in for the bus). Patterns
 * and paths are checked here with the API's rules (lib/core) so a bad one is a usage error
 * before any request.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { checkEventPattern } from "../../core/event-pattern.js";
import { checkJsonPath } from "../../core/json-path.js";
import type { PutEventsResult, Trigger, TriggerCreated, TriggerOutcome } from "../api-types.js";
import type { CliContext } from "../context.js";
import { EXIT, UsageError } from "../errors.js";
import { formatTime, oneLine, toJson } from "../format.js";
import { type FlagMap, seg } from "../http.js";
import { printList } from "../list-output.js";
import { intIn, keyValue, outputOption, TABLE_OR_JSON, TEXT_OR_JSON } from "../options.js";
import { formatParams, labelled } from "./schedules.js";

interface CreateOptions {
  pattern: string;
  param?: Record<string, string>;
  debounce?: number;
  offline?: boolean;
}

interface PutOptions {
  source: string;
  detailType: string;
  detail: string;
  output: string;
}

/** Fields of the trigger body and the flags of `trigger create` that fill them. */
const TRIGGER_FLAGS: FlagMap = {
  eventPattern: "--pattern",
  params: "--param",
  debounceSeconds: "--debounce",
};

/** Fields of the one-entry PutEvents body of `events put` and the flags that fill them. */
const EVENT_FLAGS: FlagMap = {
  "Entries[0].Source": "--source",
  "Entries[0].DetailType": "--detail-type",
  "Entries[0].Detail": "--detail",
};

/** Registers `triggers` (list), `trigger create|get|delete` and `events put`. */
export function registerTriggers(program: Command, ctx: CliContext): void {
  program
    .command("triggers")
    .description("list event triggers, with the pattern each matches")
    .addOption(outputOption(TABLE_OR_JSON))
    .action(async (opts: { output: string }) => {
      const items = await ctx.api().getAll<Trigger>("/v1/triggers");
      printList(ctx, items, opts.output, {
        empty: "no triggers (create one with: shoal trigger create WORKFLOW --pattern JSON)",
        headers: [
          "ID",
          "WORKFLOW",
          "STATE",
          "PATTERN",
          "PARAMS",
          "DEBOUNCE",
          "LAST FIRED",
          "REFUSED",
        ],
        row: (t) => [
          t.id,
          t.workflow,
          t.state,
          oneLine(JSON.stringify(t.eventPattern), 60),
          formatParams(t.params) ?? "-",
          t.debounceSeconds > 0 ? `${t.debounceSeconds}s` : "-",
          formatTime(t.lastFiredAt),
          refusals(t),
        ],
      });
    });

  const trigger = program
    .command("trigger")
    .description("create, show, put online or offline, or delete one event trigger");

  trigger
    .command("create")
    .description("start WORKFLOW for every event matching an EventBridge pattern; print the id")
    .argument("<workflow>", "workflow name")
    .requiredOption("--pattern <json|@file>", "EventBridge event pattern (JSON, or @file with it)")
    .option(
      "-p, --param <name=$.path>",
      "run parameter taken from the event by JSONPath, e.g. id=$.detail.id (repeatable)",
      keyValue,
    )
    .option(
      "--debounce <seconds>",
      "start nothing for matches within this long of the last run (0..86400, default 0)",
      intIn(0, 86_400),
    )
    .option("--offline", "create it OFFLINE (start it later with: shoal trigger online ID)")
    .action(async (workflow: string, opts: CreateOptions) => {
      const pattern = await readJsonObject("--pattern", opts.pattern);
      const problem = checkEventPattern(pattern);
      if (problem) throw new UsageError(`--pattern: ${problem}`);
      for (const [name, path] of Object.entries(opts.param ?? {})) {
        const bad = checkJsonPath(path);
        if (bad) throw new UsageError(`--param ${name}: ${bad}`);
      }
      const body: Record<string, unknown> = { workflow, eventPattern: pattern };
      if (opts.param) body.params = opts.param;
      if (opts.debounce !== undefined) body.debounceSeconds = opts.debounce;
      if (opts.offline) body.state = "OFFLINE";
      const res = await ctx.api().post<TriggerCreated>("/v1/triggers", body, TRIGGER_FLAGS);
      ctx.out(res.body.id);
      for (const w of res.body.warnings ?? []) {
        ctx.io.stderr.write(`warning: ${w.path ? `${w.path}: ` : ""}${w.message}\n`);
      }
    });

  trigger
    .command("get")
    .description("show one event trigger")
    .argument("<id>", "trigger id")
    .addOption(outputOption(TEXT_OR_JSON))
    .action(async (id: string, opts: { output: string }) => {
      const t = await ctx.api().get<Trigger>(`/v1/triggers/${seg(id)}`);
      if (opts.output === "JSON") {
        ctx.out(toJson(t));
        return;
      }
      for (const line of describeTrigger(t)) ctx.out(line);
    });

  for (const state of ["online", "offline"] as const) {
    trigger
      .command(state)
      .description(
        state === "online"
          ? "put a trigger ONLINE: matching events start runs again"
          : "put a trigger OFFLINE: it starts nothing (runs it started go on)",
      )
      .argument("<id>", "trigger id")
      .action(async (id: string) => {
        const res = await ctx.api().post<Trigger>(`/v1/triggers/${seg(id)}/${state}`);
        ctx.out(`${res.body.id} ${res.body.state}`);
      });
  }

  trigger
    .command("delete")
    .description("delete an event trigger (runs it started are kept)")
    .argument("<id>", "trigger id")
    .action(async (id: string) => {
      await ctx.api().delete(`/v1/triggers/${seg(id)}`);
      ctx.out(`${id} deleted`);
    });

  const events = program.command("events").description("send events to the triggers");

  events
    .command("put")
    .description(
      "send one event (EventBridge PutEvents style); print its id and the runs it started",
    )
    .requiredOption("--source <source>", "the event's source, e.g. com.example.orders")
    .requiredOption("--detail-type <type>", "the event's detail-type, e.g. OrderPlaced")
    .requiredOption("--detail <json|@file>", "the event's detail: a JSON object, or @file with it")
    .addOption(outputOption(TEXT_OR_JSON))
    .action(async (opts: PutOptions) => {
      const detail = await readJsonObject("--detail", opts.detail);
      const entry = {
        Source: opts.source,
        DetailType: opts.detailType,
        Detail: JSON.stringify(detail),
      };
      const res = await ctx
        .api()
        .post<PutEventsResult>("/v1/events", { Entries: [entry] }, EVENT_FLAGS);
      const result = res.body;
      if ((result.FailedEntryCount ?? 0) > 0) ctx.exitCode = EXIT.error;
      if (opts.output === "JSON") {
        ctx.out(toJson(result));
        return;
      }
      for (const line of describeEvents(result)) ctx.out(line);
    });
}

/**
 * Reads an option value that is JSON text or `@file` holding it, and checks it is an object
 * (an event pattern and an event detail both must be).
 * @throws UsageError naming `option` when the file cannot be read, the text is not JSON, or the
 * value is not an object.
 */
async function readJsonObject(option: string, value: string): Promise<Record<string, unknown>> {
  let text = value;
  let where = "";
  if (value.startsWith("@")) {
    const file = value.slice(1);
    where = ` in ${file}`;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : code;
      throw new UsageError(`${option}: cannot read ${file}: ${why ?? String(err)}`, {
        cause: err,
      });
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${option}: not valid JSON${where}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${option}: must be a JSON object${where}`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * The text form of `shoal events put`: per event its id, then one indented line per matching
 * trigger with the run it started or why it started none.
 */
export function describeEvents(result: PutEventsResult): string[] {
  const lines: string[] = [];
  for (const e of result.Entries ?? []) {
    if (e.EventId === undefined) {
      lines.push(`failed: ${e.ErrorCode ?? "error"}${e.ErrorMessage ? `: ${e.ErrorMessage}` : ""}`);
      continue;
    }
    lines.push(e.EventId);
    const triggers = e.Triggers ?? [];
    if (triggers.length === 0) lines.push("  no trigger matched");
    for (const t of triggers) lines.push(`  trigger ${t.triggerId}  ${outcome(t)}`);
  }
  return lines;
}

function outcome(t: TriggerOutcome): string {
  if (t.instanceId !== undefined) return `started ${t.instanceId}`;
  return `skipped: ${t.skipped ?? "no run started"}`;
}

/** The REFUSED column: runs refused over the rate limit, and loops stopped. */
function refusals(t: Trigger): string {
  const parts = [
    ...(t.refusedRuns > 0 ? [`${t.refusedRuns} over rate`] : []),
    ...(t.loopStops > 0 ? [`${t.loopStops} loop`] : []),
  ];
  return parts.length > 0 ? parts.join(", ") : "-";
}

/** The `loop stopped` line of `shoal trigger get`. */
function loopStopLine(t: Trigger): string | undefined {
  const s = t.lastLoopStop;
  if (!s) return undefined;
  const why =
    s.reason === "DEPTH"
      ? `a run ${s.depth} triggers deep (limit ${s.limit})`
      : `event ${s.originEventId} had led to ${s.limit} runs (the limit)`;
  const chain = s.chain.length > 0 ? `; chain ${s.chain.join(" → ")}` : "";
  return `${t.loopStops} time${t.loopStops === 1 ? "" : "s"}, last ${formatTime(s.at)}: ${why}${chain}`;
}

/** The text form of `shoal trigger get`: `label: value` lines, then the pattern as JSON. */
export function describeTrigger(t: Trigger): string[] {
  const lines = labelled([
    ["id", t.id],
    ["workflow", t.workflow],
    ["state", t.state],
    ["params", formatParams(t.params)],
    ["debounce", t.debounceSeconds > 0 ? `${t.debounceSeconds}s` : "off"],
    ["created", formatTime(t.createdAt)],
    ["last fired", t.lastFiredAt === undefined ? undefined : formatTime(t.lastFiredAt)],
    [
      "refused",
      t.refusedRuns > 0
        ? `${t.refusedRuns} run${t.refusedRuns === 1 ? "" : "s"} over the rate limit, last ${formatTime(t.lastRefusedAt)}`
        : undefined,
    ],
    ["loop stopped", loopStopLine(t)],
  ]);
  // Patterns nest: printed whole and indented rather than squeezed onto one line.
  lines.push(
    "pattern:",
    ...toJson(t.eventPattern)
      .split("\n")
      .map((l) => `  ${l}`),
  );
  return lines;
}

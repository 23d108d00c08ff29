/**
 * The flags of `shoal schedule create` and `shoal schedule update` and the bodies they make:
 * create sends only what was given (the API's defaults apply to the rest); update reads the
 * schedule, changes only what was given, and sends the whole of it (`PUT /v1/schedules/{id}`
 * replaces every setting). Timing is checked with the API's own rules (lib/core/schedule-time.ts)
 * so a bad cron is a usage error before any request.
 */
import { readFileSync } from "node:fs";
import { type Command, InvalidArgumentError } from "commander";
import { parse as parseYaml } from "yaml";
import { FAILURE_STRATEGIES, PRIORITIES } from "../core/model.js";
import { checkTiming } from "../core/schedule-check.js";
import type { Schedule } from "./api-types.js";
import { UsageError } from "./errors.js";
import type { FlagMap } from "./http.js";
import { choiceOption, intIn, isoInstant, keyValue } from "./options.js";

/** Quartz-named misfire policies (lib/store/schedules.ts MisfirePolicy). */
const MISFIRE_POLICIES = ["SKIP", "FIRE_ONCE", "FIRE_ALL"] as const;
/** What a fire does while the previous run still goes (lib/store/schedules.ts OverlapPolicy). */
const OVERLAP_POLICIES = ["PARALLEL", "SERIAL_WAIT", "SERIAL_DISCARD", "SERIAL_PRIORITY"] as const;

/** The options `schedule create` and `schedule update` share (commander's names). */
export interface ScheduleOptions {
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
  /** `--alerts`: the schedule's alert rules as given (the API checks them). */
  alerts?: unknown[];
}

/** Every key of {@link ScheduleOptions} (a command's options also hold the global flags). */
const SCHEDULE_OPTION_KEYS: ReadonlyArray<keyof ScheduleOptions> = [
  "cron",
  "rate",
  "at",
  "timezone",
  "start",
  "end",
  "param",
  "priority",
  "failureStrategy",
  "workerGroup",
  "misfire",
  "misfireThreshold",
  "maxCatchup",
  "overlap",
  "alerts",
];

/**
 * Fields of the schedule body (lib/api/schedules.ts scheduleSchema) and the flags that fill
 * them, so API errors name the flag.
 */
export const SCHEDULE_FLAGS: FlagMap = {
  cron: "--cron",
  rate: "--rate",
  at: "--at",
  timezone: "--timezone",
  startTime: "--start",
  endTime: "--end",
  params: "--param",
  priority: "--priority",
  failureStrategy: "--failure-strategy",
  workerGroup: "--worker-group",
  misfirePolicy: "--misfire",
  misfireThresholdSeconds: "--misfire-threshold",
  maxCatchup: "--max-catchup",
  overlapPolicy: "--overlap",
  alerts: "--alerts",
};

/**
 * Parser of `--alerts JSON|@FILE`: the schedule's `alerts` list (docs/alerts.md), inline or read
 * from FILE; JSON, or YAML (a superset). Only its shape (a list) is checked here: the API checks
 * each rule and its errors name `--alerts` (SCHEDULE_FLAGS). `[]` removes the schedule's rules.
 * @throws InvalidArgumentError (a usage error, exit 2) for an unreadable file, text that does not
 *   parse, or a value that is not a list.
 */
export function alertRulesOption(value: string): unknown[] {
  let text = value;
  if (value.startsWith("@")) {
    try {
      text = readFileSync(value.slice(1), "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new InvalidArgumentError(
        `cannot read ${value.slice(1)}: ${code === "ENOENT" ? "no such file" : (code ?? String(err))}.`,
      );
    }
  }
  let rules: unknown;
  try {
    rules = parseYaml(text);
  } catch (err) {
    throw new InvalidArgumentError(`not JSON or YAML: ${(err as Error).message.split("\n")[0]}.`);
  }
  if (!Array.isArray(rules)) {
    throw new InvalidArgumentError(
      'must be a list of rules, e.g. [{"on":["FAILURE"],"channels":["ops"]}] (or @FILE).',
    );
  }
  return rules;
}

/**
 * Adds the schedule flags to `cmd`. `defaults`: say the API's defaults in the help (create);
 * an update changes only what is given, so it has none.
 */
export function addScheduleOptions(cmd: Command, defaults: boolean): Command {
  const dflt = (text: string) => (defaults ? ` (default ${text})` : "");
  // Create sends a policy only when given, so the API's default applies: the help names it.
  const api = <T extends string>(value: T) => (defaults ? { api: value } : {});
  return cmd
    .option("--cron <expr>", "cron: 5 fields, or 6 with seconds first, in --timezone")
    .option("--rate <interval>", 'fixed interval, e.g. "5 minutes" (seconds|minutes|hours|days)')
    .option("--at <iso>", "fire once at this instant", isoInstant)
    .option(
      "--timezone <zone>",
      `IANA zone of --cron and of the runs' time parameters, e.g. Europe/Paris${dflt("the workflow's timezone, else UTC")}`,
    )
    .option("--start <iso>", "no fire before this instant", isoInstant)
    .option("--end <iso>", "no fire after this instant", isoInstant)
    .option(
      "-p, --param <key=value>",
      `parameter of every run (repeatable${defaults ? "" : "; other parameters are kept"})`,
      keyValue,
    )
    .addOption(choiceOption("--priority <priority>", "run priority", PRIORITIES))
    .addOption(
      choiceOption(
        "--failure-strategy <strategy>",
        "after a task fails for good",
        FAILURE_STRATEGIES,
      ),
    )
    .option("--worker-group <group>", "worker group of the runs' tasks")
    .addOption(
      choiceOption("--misfire <policy>", "fires found late", MISFIRE_POLICIES, api("FIRE_ONCE")),
    )
    .option(
      "--misfire-threshold <seconds>",
      `a fire later than this is a misfire (0..86400${defaults ? ", default 60" : ""})`,
      intIn(0, 86_400),
    )
    .option(
      "--max-catchup <n>",
      `FIRE_ALL: most missed times fired at once (1..1000${defaults ? ", default 100" : ""})`,
      intIn(1, 1_000),
    )
    .addOption(
      choiceOption(
        "--overlap <policy>",
        "while the previous run goes",
        OVERLAP_POLICIES,
        api("PARALLEL"),
      ),
    )
    .option(
      "--alerts <json|@file>",
      `alert rules of the schedule's runs and misfires, e.g. '[{"on":["FAILURE"],"channels":["ops"]}]'${defaults ? "" : " (replaces them; [] removes them)"}`,
      alertRulesOption,
    );
}

/**
 * The body of `POST /v1/schedules` from `schedule create`'s options: only what was given, so the
 * API's defaults apply to the rest.
 * @throws UsageError without exactly one of --cron/--rate/--at, or when the timing is invalid by
 * the API's rules (checkTiming): a cron no date matches, an unknown zone, --end before --start…
 */
export function createBody(
  workflow: string,
  opts: ScheduleOptions & { offline?: boolean },
): Record<string, unknown> {
  const given = timingFlags(opts);
  if (given.length !== 1) {
    throw new UsageError(
      given.length === 0
        ? "give when it fires: one of --cron, --rate or --at"
        : `give only one of --cron, --rate or --at (got ${given.join(", ")})`,
    );
  }
  const body: Record<string, unknown> = { workflow };
  applyOptions(body, opts);
  checkBodyTiming(body);
  if (opts.offline) body.state = "OFFLINE";
  return body;
}

/**
 * The body of `PUT /v1/schedules/{id}` for `schedule update`: the schedule as `current` shows it
 * with only the given options changed. A new --cron, --rate or --at replaces the timing (the
 * other two are dropped); --param adds or replaces parameters and keeps the others; the state
 * (ONLINE/OFFLINE) is kept.
 * @throws UsageError when no option is given, more than one of --cron/--rate/--at is, or the
 * resulting timing is invalid by the API's rules.
 */
export function updateBody(current: Schedule, opts: ScheduleOptions): Record<string, unknown> {
  if (!SCHEDULE_OPTION_KEYS.some((k) => opts[k] !== undefined)) {
    throw new UsageError("nothing to change: give at least one option (see --help)");
  }
  const given = timingFlags(opts);
  if (given.length > 1) {
    throw new UsageError(`give only one of --cron, --rate or --at (got ${given.join(", ")})`);
  }
  const body: Record<string, unknown> = {
    workflow: current.workflow,
    ...pick(current, ["cron", "rate", "at", "timezone", "startTime", "endTime"]),
    params: { ...(current.params ?? {}) },
    ...pick(current, ["priority", "failureStrategy", "workerGroup"]),
    ...pick(current, ["misfirePolicy", "misfireThresholdSeconds", "maxCatchup", "overlapPolicy"]),
    // Kept unless --alerts is given: a PUT without them would remove them.
    ...pick(current, ["alerts"]),
    state: current.state,
  };
  if (given.length === 1) {
    delete body.cron;
    delete body.rate;
    delete body.at;
  }
  applyOptions(body, { ...opts, param: { ...(body.params as object), ...(opts.param ?? {}) } });
  checkBodyTiming(body);
  return body;
}

/** `--cron`, `--rate`, `--at`: those given. */
function timingFlags(opts: ScheduleOptions): string[] {
  return (["cron", "rate", "at"] as const)
    .filter((k) => opts[k] !== undefined)
    .map((k) => `--${k}`);
}

/** The defined values of `keys` of `s`. */
function pick<K extends keyof Schedule>(s: Schedule, keys: readonly K[]): Partial<Schedule> {
  const out: Partial<Schedule> = {};
  for (const k of keys) if (s[k] !== undefined) out[k] = s[k];
  return out;
}

/** Sets the body fields of the options that were given. */
function applyOptions(body: Record<string, unknown>, opts: ScheduleOptions): void {
  if (opts.cron !== undefined) body.cron = opts.cron;
  if (opts.rate !== undefined) body.rate = opts.rate;
  if (opts.at !== undefined) body.at = opts.at;
  if (opts.timezone !== undefined) body.timezone = opts.timezone;
  if (opts.start !== undefined) body.startTime = opts.start;
  if (opts.end !== undefined) body.endTime = opts.end;
  if (opts.param && Object.keys(opts.param).length > 0) body.params = opts.param;
  if (opts.priority) body.priority = opts.priority;
  if (opts.failureStrategy) body.failureStrategy = opts.failureStrategy;
  if (opts.workerGroup !== undefined) body.workerGroup = opts.workerGroup;
  if (opts.misfire) body.misfirePolicy = opts.misfire;
  if (opts.misfireThreshold !== undefined) body.misfireThresholdSeconds = opts.misfireThreshold;
  if (opts.maxCatchup !== undefined) body.maxCatchup = opts.maxCatchup;
  if (opts.overlap) body.overlapPolicy = opts.overlap;
  if (opts.alerts !== undefined) body.alerts = opts.alerts;
}

/**
 * Checks the body's timing with the API's rules.
 * @throws UsageError naming the flags (`--cron: …; --timezone: …`).
 */
function checkBodyTiming(body: Record<string, unknown>): void {
  const str = (k: string) => (typeof body[k] === "string" ? (body[k] as string) : undefined);
  const ms = (k: string) => {
    const v = str(k);
    return v === undefined ? undefined : Date.parse(v);
  };
  const problems = checkTiming({
    cron: str("cron"),
    rate: str("rate"),
    at: ms("at"),
    timezone: str("timezone") ?? "UTC",
    startTime: ms("startTime"),
    endTime: ms("endTime"),
  });
  if (problems.length > 0) {
    throw new UsageError(
      problems.map((p) => `${SCHEDULE_FLAGS[p.path] ?? p.path}: ${p.message}`).join("; "),
    );
  }
}

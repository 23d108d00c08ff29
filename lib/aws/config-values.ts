/**
 * Readers of the settings in environment variables (lib/aws/config.ts `configFromEnv`): each
 * takes its default when the variable is unset or empty, and throws an Error naming the variable
 * and its rule otherwise (`SHOAL_LEASE_SECONDS must be a positive number, got 'x'`).
 */
import {
  DEFAULT_TRIGGER_LIMITS,
  TRIGGER_LIMIT_RANGES,
  type TriggerLimits,
} from "../core/trigger-events.js";
import { ENV } from "./env-names.js";

/** SHOAL_TASK_EVENTS: which task state-change events are published. */
export type TaskEventsSetting = "unsuccessful" | "all" | "none";

const TASK_EVENTS_SETTINGS: readonly TaskEventsSetting[] = ["unsuccessful", "all", "none"];

/**
 * Parses SHOAL_TASK_EVENTS (empty: `unsuccessful`).
 * @throws Error naming the variable and the values it takes.
 */
export function taskEventsSetting(value: string | undefined): TaskEventsSetting {
  if (!value) return "unsuccessful";
  if (!(TASK_EVENTS_SETTINGS as readonly string[]).includes(value))
    throw new Error(
      `${ENV.taskEvents} must be one of: ${TASK_EVENTS_SETTINGS.join(", ")} (it is '${value}')`,
    );
  return value as TaskEventsSetting;
}

/** A number read from `env[key]`, or `fallback`; `rule` names what `ok` accepts. */
function read(
  env: NodeJS.ProcessEnv,
  key: string,
  fallback: number,
  ok: (n: number) => boolean,
  rule: string,
): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!ok(n)) throw new Error(`${key} must be ${rule}, got '${raw}'`);
  return n;
}

/** A positive number (seconds of a period, a lease). */
export const positive = (env: NodeJS.ProcessEnv, key: string, fallback: number): number =>
  read(env, key, fallback, (n) => Number.isFinite(n) && n > 0, "a positive number");

/** A number of days >= 0; unset: 0. */
export const days = (env: NodeJS.ProcessEnv, key: string): number =>
  read(env, key, 0, (n) => Number.isFinite(n) && n >= 0, "a number of days >= 0");

/** A number of minutes >= 0. */
export const minutes = (env: NodeJS.ProcessEnv, key: string, fallback: number): number =>
  read(env, key, fallback, (n) => Number.isFinite(n) && n >= 0, "a number of minutes >= 0");

/** The trigger limits (SHOAL_TRIGGER_MAX_*): whole numbers in TRIGGER_LIMIT_RANGES. */
export function triggerLimitsFromEnv(env: NodeJS.ProcessEnv): TriggerLimits {
  const limit = (key: string, which: keyof TriggerLimits) => {
    const [lo, hi] = TRIGGER_LIMIT_RANGES[which];
    return read(
      env,
      key,
      DEFAULT_TRIGGER_LIMITS[which],
      (n) => Number.isInteger(n) && n >= lo && n <= hi,
      `a whole number from ${lo} to ${hi}`,
    );
  };
  return {
    maxDepth: limit(ENV.triggerMaxDepth, "maxDepth"),
    maxRunsPerOrigin: limit(ENV.triggerMaxRunsPerEvent, "maxRunsPerOrigin"),
    maxRunsPerMinute: limit(ENV.triggerMaxRunsPerMinute, "maxRunsPerMinute"),
  };
}

/**
 * Parses SHOAL_ALERT_CHANNELS (undefined when unset or empty).
 * @throws Error naming the variable unless it is a JSON object of strings.
 */
export function alertChannelsSetting(
  value: string | undefined,
): Record<string, string> | undefined {
  if (!value) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const ok =
    typeof parsed === "object" &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every((t) => typeof t === "string");
  if (!ok) {
    throw new Error(
      `${ENV.alertChannels} must be a JSON object of channel name to type, e.g. {"ops":"slack"}`,
    );
  }
  return parsed as Record<string, string>;
}

/** `{alertChannels}` from SHOAL_ALERT_CHANNELS, or nothing when unset. */
export function alertChannelsOf(env: NodeJS.ProcessEnv): {
  alertChannels?: Record<string, string>;
} {
  const alertChannels = alertChannelsSetting(env[ENV.alertChannels]);
  return alertChannels ? { alertChannels } : {};
}

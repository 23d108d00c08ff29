/**
 * The syntax of schedule timings (schedule-time.ts): instants, `rate` strings, and cron strings
 * checked field by field with cron-parser's own parser, each problem as one sentence naming the
 * field. Rates as EventBridge's `rate()`; crons as cron-parser v5, without `H`.
 *
 * Pure: no clock reads.
 */
import { CronExpressionParser } from "cron-parser";

const SECOND = 1000;

/** Length of one `rate` unit, ms. */
const RATE_UNITS: Record<string, number> = {
  second: SECOND,
  minute: 60 * SECOND,
  hour: 3_600_000,
  day: 86_400_000,
};

/** Field names for messages, 6-field order (a 5-field cron drops the first). */
export const CRON_FIELDS = ["second", "minute", "hour", "day of month", "month", "day of week"];

/** Fixed seed for cron-parser's `H` so that nothing depends on chance (checkTiming rejects H). */
export const HASH_SEED = "shoal";

/** An instant the core accepts: a safe integer of epoch ms. */
export function isInstant(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v);
}

/**
 * Period of a `rate`, ms, or the problem with it as one sentence.
 * The unit is plural always, or singular when N = 1 (`"1 hour"`), as EventBridge's `rate()`.
 */
export function parseRate(rate: unknown): { periodMs: number } | { problem: string } {
  if (typeof rate !== "string") return { problem: "rate must be a string" };
  const m = /^\s*(\d+)\s+(second|minute|hour|day)(s?)\s*$/.exec(rate);
  const n = m ? Number(m[1]) : 0;
  if (!m || n < 1 || !/^[1-9]/.test(m[1] as string)) {
    return {
      problem: `rate '${rate}' is not "N seconds|minutes|hours|days" with a whole N of at least 1`,
    };
  }
  const unit = m[2] as string;
  if (m[3] === "" && n !== 1) {
    return { problem: `rate '${rate}' needs the plural unit ('${n} ${unit}s')` };
  }
  const periodMs = n * (RATE_UNITS[unit] as number);
  if (!Number.isSafeInteger(periodMs)) return { problem: `rate '${rate}' is too long` };
  return { periodMs };
}

/** Whether a cron field uses `H` (a hashed, i.e. per-parse random, value). */
export function isHashed(field: string): boolean {
  return /(^|,)H(?=$|[(/#,])/i.test(field);
}

/**
 * The problem with one field as cron-parser reports it, rewritten to name the field:
 * "bad minute value '61' (expected 0-59)", or "bad hour field '5-1': invalid range: …".
 */
export function fieldProblem(name: string, text: string, error: string): string {
  const range = /got value (\S+) expected range (\d+-\d+)/.exec(error);
  if (range) return `bad ${name} value '${range[1]}' (expected ${range[2]})`;
  const twice = /duplicate values found: (\S+)/.exec(error);
  if (twice) return `bad ${name} field '${text}': it lists ${twice[1]} twice`;
  const chars = /^Invalid characters, got value: (.*)$/.exec(error);
  if (chars) return `bad ${name} value '${chars[1] || text}'`;
  const detail = error.replace(/\.$/, "").replace(/^Constraint error,\s*/i, "");
  return `bad ${name} field '${text}': ${detail.charAt(0).toLowerCase()}${detail.slice(1)}`;
}

/** The problem with a cron's shape (a string of 5 or 6 fields, no `H`), before cron-parser. */
export function cronShapeProblem(expr: unknown): string | undefined {
  if (typeof expr !== "string") return "cron must be a string";
  const fields = expr.trim() === "" ? [] : expr.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return `cron needs 5 fields, or 6 with seconds first (got ${fields.length})`;
  }
  const names = fields.length === 6 ? CRON_FIELDS : CRON_FIELDS.slice(1);
  for (const [i, field] of fields.entries()) {
    if (isHashed(field)) {
      return `${names[i]} field '${field}' uses H (hashed values), which Shoal does not support`;
    }
  }
  return undefined;
}

/**
 * The problem with a cron expression's syntax as one sentence, or undefined when cron-parser
 * accepts it as 5 or 6 fields without `H`. Each field is parsed alone first (others `*`) so the
 * message can name the field; cron-parser's own messages do not.
 */
export function cronSyntaxProblem(expr: unknown): string | undefined {
  const shape = cronShapeProblem(expr);
  if (shape !== undefined || typeof expr !== "string") return shape;
  const fields = expr.trim().split(/\s+/);
  const names = fields.length === 6 ? CRON_FIELDS : CRON_FIELDS.slice(1);
  for (const [i, field] of fields.entries()) {
    const probe = fields.map((f, j) => (j === i ? f : "*")).join(" ");
    try {
      CronExpressionParser.parse(probe, { tz: "UTC", currentDate: 0, hashSeed: HASH_SEED });
    } catch (e) {
      return fieldProblem(names[i] as string, field, (e as Error).message);
    }
  }
  try {
    CronExpressionParser.parse(expr, { tz: "UTC", currentDate: 0, hashSeed: HASH_SEED });
  } catch (e) {
    const message = (e as Error).message;
    // cron-parser's check that an explicit day of month occurs in one of the months.
    if (/day of month/i.test(message)) {
      return "cron never fires: its day of month does not occur in any of its months";
    }
    return `cron is not valid: ${message.replace(/\.$/, "")}`;
  }
  return undefined;
}

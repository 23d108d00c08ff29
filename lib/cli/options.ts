/**
 * Parsers for option values. They throw commander's InvalidArgumentError so bad values are
 * usage errors (exit 2) reported with the option's name.
 */
import { InvalidArgumentError, Option } from "commander";

/** Parser for an integer within [min, max]. */
export function intIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}.`);
    }
    return n;
  };
}

/** Parser for a positive number of seconds (fractions allowed). */
export function positiveSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError("must be a number of seconds greater than 0.");
  }
  return n;
}

/** Parser for a finite number >= 0 (e.g. a time scale, where 0 is meaningful). */
export function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new InvalidArgumentError("must be a number of 0 or more.");
  }
  return n;
}

/** `table|json`: the values of an upper-case enum as they are typed. */
export function typed(choices: readonly string[]): string {
  return choices.map((c) => c.toLowerCase()).join("|");
}

/**
 * Parser for one of `choices` (upper-case, as the API spells them), case-insensitive, returned
 * upper-case. A bad value is a usage error listing them as typed (`table|json`).
 */
export function oneOf<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    const upper = value.toUpperCase();
    const hit = choices.find((c) => c === upper);
    if (hit === undefined) {
      throw new InvalidArgumentError(`must be one of ${typed(choices)}.`);
    }
    return hit;
  };
}

/**
 * An option taking one of `choices` (upper-case, as the API wants them): help shows
 * `<description>: a|b|c (default: a)` in lower case, as the values are typed; parsing is
 * case-insensitive ({@link oneOf}) and yields the upper-case value. Commander's own `.choices()`
 * would match case-sensitively and show the values quoted.
 * @param flags commander flags, e.g. `-o, --output <format>`.
 * @param description what the value chooses, e.g. `output format`; the values follow it.
 * @param defaults `value`: the option's value when not given; `api`: the value the API takes
 *   when the field is left out (shown the same way, but nothing is sent).
 */
export function choiceOption<T extends string>(
  flags: string,
  description: string,
  choices: readonly T[],
  defaults: { value?: T; api?: T } = {},
): Option {
  const api = defaults.api === undefined ? "" : ` (default: ${defaults.api.toLowerCase()})`;
  const option = new Option(flags, `${description}: ${typed(choices)}${api}`).argParser(
    oneOf(choices),
  );
  const { value } = defaults;
  return value === undefined ? option : option.default(value, value.toLowerCase());
}

/** Output formats of list verbs. */
export const TABLE_OR_JSON = ["TABLE", "JSON"] as const;
/** Output formats of verbs that show one resource. */
export const TEXT_OR_JSON = ["TEXT", "JSON"] as const;

/** `-o, --output <format>`: one of `formats`, the first by default. */
export function outputOption(formats: readonly [string, ...string[]]): Option {
  return choiceOption("-o, --output <format>", "output format", formats, { value: formats[0] });
}

/** Repeatable `--param k=v`: accumulates into a record; a later `k` overrides an earlier one. */
export function keyValue(value: string, previous: Record<string, string> = {}) {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError("expected key=value.");
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/** Repeatable list option; each value may also hold several comma-separated items. */
export function list(value: string, previous: string[] = []): string[] {
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (items.length === 0) throw new InvalidArgumentError("must not be empty.");
  return [...previous, ...items];
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

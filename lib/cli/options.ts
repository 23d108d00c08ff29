/**
 * Parsers for option values. They throw commander's InvalidArgumentError so bad values are
 * usage errors (exit 2) reported with the option's name.
 */
import { InvalidArgumentError } from "commander";

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

/** Parser for one of `choices`, case-insensitive, returned upper-case as the API spells it. */
export function oneOf<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    const upper = value.toUpperCase();
    const hit = choices.find((c) => c === upper);
    if (hit === undefined) {
      throw new InvalidArgumentError(`allowed: ${choices.join(", ")}.`);
    }
    return hit;
  };
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

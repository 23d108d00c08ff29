/**
 * Plain wording for the problems zod finds in a request body, instead of zod's own ("Invalid
 * input: expected string, received undefined"): "is required", "must be a string", "must not be
 * empty", "must be an object". A zod 4 error map (https://zod.dev/error-customization), passed
 * to every parse of a request body (`safeParse(body, PARSE_OPTIONS)`); a message a schema gives
 * itself (`{ error: … }`) still wins, so the rules that need more words keep theirs. Pure.
 */
import type { z } from "zod";

/** What a value of zod's `expected` type is called in a message ("must be a string"). */
const TYPE_WORDS: Record<string, string> = {
  string: "must be a string",
  number: "must be a number",
  int: "must be a whole number",
  boolean: "must be true or false",
  object: "must be an object",
  array: "must be a list",
  tuple: "must be a list",
  record: "must be a map of name: value",
  map: "must be a map of name: value",
};

/**
 * The message of one issue, or undefined to keep zod's (a kind of problem with no plain wording
 * here: a union, a custom check).
 */
export const plainMessages: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return TYPE_WORDS[issue.expected] ?? `must be a ${issue.expected}`;
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") {
        return min === 1 ? "must not be empty" : `must be at least ${min} characters`;
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return min === 1 ? "must not be empty" : `must have at least ${min} items`;
      }
      if (issue.origin === "number" || issue.origin === "int") {
        return issue.inclusive === false ? `must be > ${min}` : `must be >= ${min}`;
      }
      return undefined;
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") return `must be at most ${max} characters`;
      if (issue.origin === "array" || issue.origin === "set")
        return `must have at most ${max} items`;
      if (issue.origin === "number" || issue.origin === "int") {
        return issue.inclusive === false ? `must be < ${max}` : `must be <= ${max}`;
      }
      return undefined;
    }
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${String(issue.values[0])}`
        : `must be one of ${issue.values.map(String).join(", ")}`;
    case "invalid_format":
      if (issue.format === "regex" && issue.pattern) return `must match ${issue.pattern}`;
      return `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    default:
      return undefined;
  }
};

/** The context of every parse of a request body: {@link plainMessages} as the error map. */
export const PARSE_OPTIONS = { error: plainMessages } as const;

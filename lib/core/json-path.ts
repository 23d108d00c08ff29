/**
 * JSONPath for OUT parameters taken from a JSON document (an HTTP task's response: `$.data.id`).
 * Evaluation is jsonpath-plus with script evaluation disabled (`eval: false`); since that
 * library accepts almost any text, paths are first checked against the subset below.
 *
 * Supported: `$`, `.name`, `.*`, `..name`, `..*`, and brackets holding `*`, indexes (`[0]`),
 * slices (`[1:3]`, `[-1:]`, `[::2]`), quoted names (`['a.b']`, `["x"]`) or a comma list of
 * them. Not supported: filters `[?(…)]` and scripts `[(…)]` (code), and jsonpath-plus
 * extensions (`^`, `~`, `@type()`).
 */

import { JSONPath } from "jsonpath-plus";
import { ParamError } from "./time-params.js";

const NAME = /[\p{L}\p{N}_-]+/uy;
const INT = /-?[0-9]+/y;
const QUOTED = /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/y;

function match(re: RegExp, s: string, at: number): string | undefined {
  re.lastIndex = at;
  return re.exec(s)?.[0];
}

/** End of the bracket selector starting at `at` (`at` itself when there is none). */
function selector(s: string, at: number): number {
  if (s[at] === "*") return at + 1;
  const quoted = match(QUOTED, s, at);
  if (quoted) return at + quoted.length;
  // Index or slice: up to three optional integers separated by ":".
  let i = at;
  let parts = 0;
  for (;;) {
    const n = match(INT, s, i);
    if (n) i += n.length;
    parts++;
    if (s[i] !== ":" || parts === 3) break;
    i++;
  }
  return i;
}

/**
 * Why `path` cannot be used, as one sentence, or undefined when it can.
 */
export function checkJsonPath(path: string): string | undefined {
  const bad = (why: string) => `JSONPath ${JSON.stringify(path)} is not valid: ${why}.`;
  if (!path.startsWith("$")) return bad('it must start with "$"');
  let i = 1;
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      const deep = path[i + 1] === ".";
      i += deep ? 2 : 1;
      if (path[i] === "*") {
        i++;
        continue;
      }
      if (deep && path[i] === "[") continue;
      const name = match(NAME, path, i);
      if (!name) return bad(`a name or "*" must follow "." at position ${i}`);
      i += name.length;
      continue;
    }
    if (c !== "[") return bad(`unexpected ${JSON.stringify(c)} at position ${i}`);
    if (path[i + 1] === "?" || path[i + 1] === "(") {
      return bad("filter and script expressions are not supported");
    }
    i++;
    for (;;) {
      const end = selector(path, i);
      const text = path.slice(i, end);
      if (end === i || (/^-[0-9]+$/.test(text) && !text.includes(":"))) {
        return bad(
          end === i
            ? `a selector must follow "[" or "," at position ${i}`
            : `negative index ${text} is not supported (use [${text}:] for the last elements)`,
        );
      }
      i = end;
      if (path[i] === ",") {
        i++;
        continue;
      }
      if (path[i] === "]") break;
      return bad(`"]" expected at position ${i}`);
    }
    i++;
  }
  return undefined;
}

/**
 * The first match of `path` in `doc`: strings as they are, other values JSON.stringify'd
 * (`null` → "null", objects and arrays as JSON); undefined when nothing matches.
 *
 * @throws ParamError with checkJsonPath's sentence for a path it rejects.
 */
export function extractJsonPath(doc: unknown, path: string): string | undefined {
  const problem = checkJsonPath(path);
  if (problem) throw new ParamError(problem);
  // JSONPath returns undefined instead of [] for a null document.
  const found: unknown = JSONPath({ path, json: doc as object, eval: false, wrap: true });
  if (!Array.isArray(found) || found.length === 0) return undefined;
  const first = found[0];
  if (typeof first === "string") return first;
  return JSON.stringify(first);
}

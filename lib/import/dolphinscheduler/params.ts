/**
 * DolphinScheduler parameters (`Property` lists: `{prop, direct, type, value}`) as Shoal
 * parameter maps. Both use `${name}` references and `$[…]` time expressions with the same
 * built-in names, so values are kept as written. IN parameters become `params`; OUT parameters
 * are what a task hands on: a SHELL task sets them by printing `${setValue(name=value)}`, in
 * Shoal as in DolphinScheduler, so they need no field; HTTP ones become `outputs`.
 * The data type (VARCHAR, INTEGER, …) has no Shoal counterpart: values are strings.
 */
import { LIMITS } from "../../core/validate.js";
import type { DsProperty } from "./export-format.js";
import { PARAM_NAME } from "./names.js";
import type { NoteBook } from "./notes.js";

/** IN parameters as a map, OUT parameter names apart. */
export interface ConvertedParams {
  params: Record<string, string>;
  /** Names of OUT parameters (valid names only). */
  outs: string[];
}

/**
 * Splits `props` into IN values and OUT names, leaving out (with a note) names Shoal refuses
 * and values over its size limit. A name given twice keeps its last value, as
 * DolphinScheduler's `Map` does.
 * @param what "global parameter", "local parameter".
 */
export function convertProperties(
  props: readonly DsProperty[],
  notes: NoteBook,
  what: string,
  task?: string,
): ConvertedParams {
  const params: Record<string, string> = {};
  const outs: string[] = [];
  for (const p of props) {
    if (p.prop === "") continue;
    if (!PARAM_NAME.test(p.prop)) {
      notes.add(
        "not-converted",
        `${what} '${p.prop}': Shoal parameter names match ^[A-Za-z_][A-Za-z0-9_.]{0,127}$; rename it here and where it is used`,
        task,
      );
      continue;
    }
    if (p.direct === "OUT") {
      if (!outs.includes(p.prop)) outs.push(p.prop);
      continue;
    }
    if (Buffer.byteLength(p.value) > LIMITS.paramValueBytes) {
      notes.add(
        "not-converted",
        `${what} '${p.prop}': its value is over ${LIMITS.paramValueBytes} bytes, Shoal's limit`,
        task,
      );
      continue;
    }
    params[p.prop] = p.value;
  }
  return { params, outs };
}

/**
 * The OUT names a SHELL command never sets with a literal `setValue(name=…)`: in
 * DolphinScheduler as in Shoal, the script must print it for the parameter to reach the tasks
 * after it.
 */
export function outsNotSet(command: string, outs: readonly string[]): string[] {
  return outs.filter((name) => !new RegExp(`setValue\\(\\s*${escapeRe(name)}\\s*=`).test(command));
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * OUT parameters: values a task hands to its downstream tasks (DolphinScheduler "Parameter
 * Context"). A SHELL task sets one by printing `${setValue(name=value)}`, DolphinScheduler's
 * form, or `#{setValue(name=value)}`; the worker collects them with limits so that a chatty
 * task cannot bloat the workflow instance item.
 */

import { PARAM_NAME } from "./params.js";

/** Caps on what one task instance may set, in UTF-8 bytes. */
export const OUT_LIMITS = {
  /** One value. */
  valueBytes: 4096,
  /** Distinct names. */
  count: 32,
  /** All names and values together. */
  totalBytes: 16384,
} as const;

/** One `setValue` found in a line of task output. */
export interface SetValue {
  name: string;
  value: string;
}

const START = /[$#]\{setValue\(/g;
const encoder = new TextEncoder();

function bytes(s: string): number {
  return encoder.encode(s).length;
}

/**
 * Every `${setValue(name=value)}` / `#{setValue(name=value)}` in `line`, in order. The name is
 * the text before the first `=`, the value everything after it up to the next `)}` (so a value
 * may contain `)` or `}` but not `)}`, and cannot span lines); both are trimmed of the
 * whitespace around them (`trim()`), so `${setValue(rows = 150)}` and the padding of BSD
 * `wc -l` give "150". DolphinScheduler 3.2's TaskOutputParameterParser keeps name and value as
 * printed (`split("=", 2)`), but then pastes the value into the text that uses it (a script, a
 * SWITCH's JavaScript), where the spaces around it vanish; Shoal passes values as data, so it
 * drops them here. Forms without `=` or without `)}` are ignored. Names are not validated here
 * (OutParams.set does).
 */
export function parseSetValues(line: string): SetValue[] {
  const found: SetValue[] = [];
  START.lastIndex = 0;
  for (let m = START.exec(line); m; m = START.exec(line)) {
    const from = m.index + m[0].length;
    const close = line.indexOf(")}", from);
    if (close < 0) break;
    const body = line.slice(from, close);
    const eq = body.indexOf("=");
    if (eq >= 0) found.push({ name: body.slice(0, eq).trim(), value: body.slice(eq + 1).trim() });
    START.lastIndex = close + 2;
  }
  return found;
}

/** The OUT parameters of one task instance, within OUT_LIMITS. */
export class OutParams {
  private readonly values = new Map<string, string>();
  private total = 0;

  /**
   * Sets `name` to `value` (a later set of the same name overwrites it). Returns undefined, or
   * — leaving everything unchanged — one sentence saying why not (invalid name, value over
   * OUT_LIMITS.valueBytes, more than OUT_LIMITS.count names, names and values over
   * OUT_LIMITS.totalBytes), which the worker fails the task with.
   */
  set(name: string, value: string): string | undefined {
    if (!PARAM_NAME.test(name)) {
      return `OUT parameter name ${JSON.stringify(name)} is not valid: it must match ${PARAM_NAME.source}.`;
    }
    const size = bytes(value);
    if (size > OUT_LIMITS.valueBytes) {
      return `OUT parameter ${name} is ${size} bytes, over the limit of ${OUT_LIMITS.valueBytes} bytes per value.`;
    }
    const previous = this.values.get(name);
    if (previous === undefined && this.values.size >= OUT_LIMITS.count) {
      return `OUT parameter ${name} would be parameter number ${this.values.size + 1}, over the limit of ${OUT_LIMITS.count} per task.`;
    }
    const total = this.total + size + (previous === undefined ? bytes(name) : -bytes(previous));
    if (total > OUT_LIMITS.totalBytes) {
      return `OUT parameter ${name} (${size} bytes) would bring the task's OUT parameters to ${total} bytes, over the limit of ${OUT_LIMITS.totalBytes} bytes.`;
    }
    this.values.set(name, value);
    this.total = total;
    return undefined;
  }

  /** Names and values set so far, in order of first set. */
  toRecord(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of this.values) {
      Object.defineProperty(out, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
}

/**
 * How the CLI shows an instance's progress: always the API's own counts (`progress` of
 * `GET /v1/instances/{id}`, lib/core/progress.ts `progressCounts`), never a count of its own, so
 * `run --wait`, `wait`, `instances --watch` and `get instance` agree with the API and the
 * console. `active` is the API's word: submitted, dispatched, running or waiting for a retry.
 */
import type { InstanceProgress } from "./api-types.js";
import type { OutStream } from "./out-stream.js";

/**
 * `12/58 done, 4 active, 1 failed`: the API's counts over the tasks in scope. A failure a
 * CONDITIONS task handled counts as done (the API's rule), a killed task as failed. Undefined
 * when the answer has no usable progress (an instance still waiting for the dispatcher).
 */
export function progressText(p: InstanceProgress | undefined): string | undefined {
  if (!p || ![p.done, p.active, p.failed, p.total].every(Number.isFinite)) return undefined;
  return `${p.done}/${p.total} done, ${p.active} active, ${p.failed} failed`;
}

/** `RUNNING  12/58 done, 4 active, 0 failed`, or the state alone while there is no progress. */
export function progressLine(state: string, p: InstanceProgress | undefined): string {
  const text = progressText(p);
  return text === undefined ? state : `${state}  ${text}`;
}

/**
 * Shows a changing status line: redrawn in place on a terminal, and on anything else (a
 * pipe, a CI log) printed only when it changes, so logs stay short.
 */
export class ProgressWriter {
  private last: string | undefined;
  private open = false;

  constructor(private readonly stream: OutStream) {}

  /** Shows `line` unless it equals the one already shown. */
  update(line: string): void {
    if (line === this.last) return;
    this.last = line;
    if (this.stream.isTTY) {
      // \x1b[K clears what a longer previous line left behind.
      this.stream.write(`\r${line}\x1b[K`);
      this.open = true;
    } else {
      this.stream.write(`${line}\n`);
    }
  }

  /** Ends the in-place line so the next output starts on a fresh line. */
  finish(): void {
    if (this.open) this.stream.write("\n");
    this.open = false;
  }
}

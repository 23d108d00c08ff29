/** The live progress line of `shoal run --wait`. */
import type { OutStream } from "./context.js";

const DONE = new Set(["SUCCESS", "FORCED_SUCCESS", "SKIPPED"]);
const ACTIVE = new Set(["SUBMITTED", "DISPATCHED", "RUNNING"]);
const FAILED = new Set(["FAILURE", "KILLED"]);

/** Task counts of one instance snapshot. */
export interface TaskCounts {
  done: number;
  running: number;
  failed: number;
}

/** Counts the latest attempt of every task by the state groups the progress line shows. */
export function countTasks(tasks: ReadonlyArray<{ state: string }>): TaskCounts {
  const counts: TaskCounts = { done: 0, running: 0, failed: 0 };
  for (const t of tasks) {
    if (DONE.has(t.state)) counts.done++;
    else if (ACTIVE.has(t.state)) counts.running++;
    else if (FAILED.has(t.state)) counts.failed++;
  }
  return counts;
}

/** `RUNNING  12/58 done  4 running  0 failed` */
export function progressLine(state: string, counts: TaskCounts, total: number): string {
  return `${state}  ${counts.done}/${total} done  ${counts.running} running  ${counts.failed} failed`;
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

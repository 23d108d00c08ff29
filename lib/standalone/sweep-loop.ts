/**
 * The sweep loop of standalone and of `shoal sweeper` processes: `sweep` every `intervalMs`, a
 * sweep still running skipping the tick rather than queueing another, and sweeps that fail in a
 * row (the tables unreachable: an emulator restarting, a standalone gone) spaced out and logged
 * now and then ({@link FailureBackoff}), not every interval.
 */
import { FailureBackoff } from "./failure-backoff.js";

/**
 * The longest wait between sweeps while they fail, ms. Short: once the store is back, overdue
 * events and failovers should not wait for the end of a long backoff (a failed sweep is a few
 * refused connections, cheap every 5 s).
 */
const SWEEP_BACKOFF_MAX_MS = 5_000;

/** A running sweep loop. */
export interface SweepLoop {
  /** Stops the timer and waits for the sweep under way, if any. */
  stop(): Promise<void>;
}

/**
 * Starts sweeping.
 * @param name prefix of the log lines (`standalone`, `sweeper`).
 */
export function startSweepLoop(opts: {
  intervalMs: number;
  sweep: () => Promise<void>;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  name: string;
}): SweepLoop {
  const failures = new FailureBackoff(opts.intervalMs, SWEEP_BACKOFF_MAX_MS);
  let stopped = false;
  let busy: Promise<void> | undefined;
  const tick = async () => {
    try {
      await opts.sweep();
      const failedBefore = failures.succeeded();
      if (failedBefore > 0) opts.log(`${opts.name}: sweeping again`, { failedBefore });
    } catch (e) {
      const report = failures.failed();
      if (report) {
        opts.log(`${opts.name}: sweep failed`, {
          error: String(e),
          failedInARow: report.failures,
          nextInSeconds: report.waitMs / 1000,
        });
      }
    }
  };
  const timer = setInterval(() => {
    if (stopped || busy || failures.remainingMs() > 0) return;
    busy = tick().finally(() => {
      busy = undefined;
    });
  }, opts.intervalMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await busy;
    },
  };
}

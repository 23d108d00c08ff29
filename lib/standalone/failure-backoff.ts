/**
 * Backoff after failures in a row of something done again and again (a poller's receives, a
 * sweeper's sweeps) while what it needs is out of reach (an emulator restarting, a standalone
 * gone): the wait doubles from `firstMs` up to `maxMs`, and only the 1st, 2nd, 4th, 8th …
 * failure is reported, so an outage costs a log line now and then rather than hundreds a second.
 */
export class FailureBackoff {
  /** Failures in a row (0 after a success). */
  private count = 0;
  /** When the wait after the last counted failure ends (epoch ms). */
  private endsAt = 0;

  /**
   * @param firstMs the wait after the first failure, ms.
   * @param maxMs the longest wait, ms.
   * @param now the clock (epoch ms).
   */
  constructor(
    private readonly firstMs: number,
    private readonly maxMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Failures in a row so far. */
  get failures(): number {
    return this.count;
  }

  /** The wait left before the next try, ms (0 when it may go now). */
  remainingMs(): number {
    return this.count > 0 ? Math.max(0, this.endsAt - this.now()) : 0;
  }

  /**
   * Counts a failure, unless one was counted and its wait is not over (several tries under way
   * at once fail together: one outage, counted once).
   * @returns what to report: undefined when nothing (not counted, or not a power of two), else
   *   the count and the wait before the next try, ms.
   */
  failed(): { failures: number; waitMs: number } | undefined {
    if (this.remainingMs() > 0) return undefined;
    this.count++;
    const waitMs = Math.min(this.maxMs, this.firstMs * 2 ** Math.min(this.count - 1, 20));
    this.endsAt = this.now() + waitMs;
    return (this.count & (this.count - 1)) === 0 ? { failures: this.count, waitMs } : undefined;
  }

  /**
   * Resets after a success.
   * @returns the failures in a row it ends (0 when there were none).
   */
  succeeded(): number {
    const before = this.count;
    this.count = 0;
    return before;
  }
}

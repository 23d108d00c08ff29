/**
 * Standalone's delivery of its bus's events to the triggers (lib/api/trigger-delivery.ts), kept
 * apart from the requests a user makes: at most `concurrency` deliveries run at once, from a
 * bounded backlog. A storm of state changes (thousands of runs finishing) then queues here instead
 * of taking the process's event loop and storage from the API, the console and `shoal trigger
 * delete` (what the trigger Lambda's own concurrency does on AWS).
 *
 * Delivery stays best effort, as EventBridge's is to a Lambda target that keeps failing: past the
 * backlog an event is dropped and counted, and at stop what is still queued is dropped (its runs
 * are what a crash at that moment would have lost; the API's records are unaffected).
 */

/** Deliveries run at once, by default. */
export const DEFAULT_TRIGGER_CONCURRENCY = 2;
/** Events waiting at most, by default; past it they are dropped. */
export const DEFAULT_TRIGGER_BACKLOG = 10_000;

/** What the queue did since it was made. */
export interface TriggerQueueStats {
  delivered: number;
  /** Dropped because the backlog was full, or still queued at stop. */
  dropped: number;
  queued: number;
  running: number;
}

export class TriggerQueue<E> {
  private readonly backlog: E[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private delivered = 0;
  private dropped = 0;

  constructor(
    private readonly opts: {
      /** Delivers one event; a failure is logged and the event dropped. */
      deliver: (event: E) => Promise<unknown>;
      /** Deliveries at once (default {@link DEFAULT_TRIGGER_CONCURRENCY}). */
      concurrency?: number;
      /** Events waiting at most (default {@link DEFAULT_TRIGGER_BACKLOG}). */
      maxBacklog?: number;
      log?: (msg: string, fields?: Record<string, unknown>) => void;
    },
  ) {}

  /** Queues an event (never waits). Dropped when the backlog is full or the queue has stopped. */
  push(event: E): void {
    if (this.stopped) return;
    if (this.backlog.length >= (this.opts.maxBacklog ?? DEFAULT_TRIGGER_BACKLOG)) {
      // One line per thousand: a storm must not become a storm of log lines.
      if (this.dropped++ % 1000 === 0) {
        this.opts.log?.("triggers: delivery backlog full; events not delivered to triggers", {
          dropped: this.dropped,
          backlog: this.backlog.length,
        });
      }
      return;
    }
    this.backlog.push(event);
    this.pump();
  }

  /**
   * Stops taking events, drops what is queued, and waits up to `graceMs` for the deliveries under
   * way (each is a few writes; one cut short is redone by nothing, like one cut by a crash).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    if (this.backlog.length > 0) {
      this.dropped += this.backlog.length;
      this.opts.log?.("triggers: stopping; queued events not delivered to triggers", {
        count: this.backlog.length,
      });
      this.backlog.length = 0;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise<void>((r) => {
        timer = setTimeout(r, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  stats(): TriggerQueueStats {
    return {
      delivered: this.delivered,
      dropped: this.dropped,
      queued: this.backlog.length,
      running: this.inFlight.size,
    };
  }

  private pump(): void {
    const max = this.opts.concurrency ?? DEFAULT_TRIGGER_CONCURRENCY;
    while (!this.stopped && this.inFlight.size < max && this.backlog.length > 0) {
      const event = this.backlog.shift() as E;
      const p: Promise<void> = this.opts
        .deliver(event)
        .then(
          () => {
            this.delivered++;
          },
          (e) => this.opts.log?.("triggers: delivery failed", { error: String(e) }),
        )
        .finally(() => {
          this.inFlight.delete(p);
          // Yield between deliveries: requests waiting on the event loop go first.
          setImmediate(() => this.pump());
        });
      this.inFlight.add(p);
    }
  }
}

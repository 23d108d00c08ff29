/**
 * The in-process event bus of `shoal standalone`: Shoal's state-change events and the events
 * `POST /v1/events` receives go through it, in EventBridge's envelope, to the triggers (the same
 * `deliverTriggerEvent` the trigger Lambda runs on AWS) and into a ring of recent events that
 * `GET /v1/events/recent` shows.
 */
import { randomUUID } from "node:crypto";
import { putEventsEntryToEvent } from "../core/event-pattern.js";
import { type StateChangeEvent, toPutEventsEntry } from "../core/state-events.js";
import type { StateChangePublisher } from "./event-publisher.js";

/** An event as EventBridge delivers it (`version`, `id`, `detail-type`, `source`, `time`, `detail`…). */
export type BusEvent = Record<string, unknown> & { id: string };

/** Receives each event put on the bus; its failures are logged, never passed to the publisher. */
export type BusSubscriber = (event: BusEvent) => Promise<unknown>;

/** How many events `recent` keeps. */
export const RECENT_EVENTS = 1_000;

export class LocalEventBus implements StateChangePublisher {
  private readonly ring: BusEvent[] = [];
  private readonly subscribers: BusSubscriber[] = [];
  /** Deliveries not finished yet (so that a stop can wait for them). */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly opts: {
      region: string;
      /** Epoch ms for events without their own time. */
      now: () => number;
      log?: (msg: string, fields?: Record<string, unknown>) => void;
      /** Ring size (default {@link RECENT_EVENTS}). */
      keep?: number;
    },
  ) {}

  /** Adds a subscriber (standalone: trigger delivery). */
  subscribe(s: BusSubscriber): void {
    this.subscribers.push(s);
  }

  /**
   * Shoal's own events: recorded and handed to the subscribers without waiting for them, so that
   * a trigger starting a run never slows the dispatcher step that published the event.
   */
  async publish(events: readonly StateChangeEvent[]): Promise<void> {
    for (const e of events) {
      const envelope = this.record(
        putEventsEntryToEvent(toPutEventsEntry(e), {
          id: randomUUID(),
          account: "000000000000",
          region: this.opts.region,
          now: e.time,
        }) as unknown as BusEvent,
      );
      for (const s of this.subscribers) this.track(s, envelope);
    }
  }

  /** Records an event that is delivered by its putter (`POST /v1/events` answers with the runs it started). */
  record(event: BusEvent): BusEvent {
    this.ring.push(event);
    const keep = this.opts.keep ?? RECENT_EVENTS;
    if (this.ring.length > keep) this.ring.splice(0, this.ring.length - keep);
    return event;
  }

  /**
   * The most recent events, newest first.
   * @param limit 1..{@link RECENT_EVENTS}
   * @param filter keeps events whose `detail-type` equals `detailType` / `source` equals `source`.
   */
  recent(limit: number, filter: { detailType?: string; source?: string } = {}): BusEvent[] {
    const out: BusEvent[] = [];
    for (let i = this.ring.length - 1; i >= 0 && out.length < limit; i--) {
      const e = this.ring[i] as BusEvent;
      if (filter.detailType !== undefined && e["detail-type"] !== filter.detailType) continue;
      if (filter.source !== undefined && e.source !== filter.source) continue;
      out.push(e);
    }
    return out;
  }

  /** Waits until every delivery started so far has finished (standalone's shutdown). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private track(s: BusSubscriber, event: BusEvent): void {
    const p = s(event)
      .catch((err) =>
        this.opts.log?.("event bus: a subscriber failed", {
          eventId: event.id,
          error: (err as Error).message,
        }),
      )
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }
}

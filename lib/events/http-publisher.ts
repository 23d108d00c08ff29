/**
 * State-change events to a `shoal standalone` over its `POST /v1/events` (PutEvents-shaped, at
 * most 10 entries per request): how a `shoal sweeper` process started next to a standalone gets
 * its misfire events onto the standalone's in-process bus (triggers, `GET /v1/events/recent`).
 * Best effort like every publisher: failures are logged, never thrown.
 */
import { type StateChangeEvent, toPutEventsEntry } from "../core/state-events.js";
import type { StateChangePublisher } from "./event-publisher.js";

export class HttpStateChangePublisher implements StateChangePublisher {
  constructor(
    private readonly opts: {
      /** The standalone's API, e.g. `http://localhost:8080`. */
      url: string;
      /**
       * The standalone's relay token (its endpoints.env): without it `POST /v1/events` refuses
       * entries with source `shoal`, which all of these are.
       */
      relayToken?: string;
      log?: (msg: string, fields?: Record<string, unknown>) => void;
    },
  ) {}

  async publish(events: readonly StateChangeEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += 10) {
      const entries = events.slice(i, i + 10).map(toPutEventsEntry);
      try {
        const res = await fetch(`${this.opts.url.replace(/\/+$/, "")}/v1/events`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(this.opts.relayToken ? { "x-shoal-relay": this.opts.relayToken } : {}),
          },
          body: JSON.stringify({ Entries: entries }),
          signal: AbortSignal.timeout(10_000),
        });
        if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      } catch (e) {
        this.opts.log?.("events: not delivered to the standalone", {
          count: entries.length,
          error: (e as Error).message,
        });
      }
    }
  }
}

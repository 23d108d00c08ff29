/**
 * State-change events to an EventBridge bus with PutEvents: at most 10 entries and 256 KB per
 * request (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html),
 * entries sized as AWS documents (Time 14 bytes + Source + DetailType + Detail, UTF-8).
 * Entries PutEvents reports failed (throttling, internal errors) are retried up to twice; what
 * still fails is logged, never thrown (event-publisher.ts says why).
 */
import { type EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { type StateChangeEvent, toPutEventsEntry } from "../core/state-events.js";
import type { StateChangePublisher } from "./event-publisher.js";

/** PutEvents limits. */
export const PUT_EVENTS_LIMITS = { entries: 10, bytes: 256 * 1024 } as const;

type Entry = ReturnType<typeof toPutEventsEntry> & { EventBusName: string };

/** An entry's size as PutEvents counts it, bytes. */
export function entrySize(e: ReturnType<typeof toPutEventsEntry>): number {
  return (
    14 + Buffer.byteLength(e.Source) + Buffer.byteLength(e.DetailType) + Buffer.byteLength(e.Detail)
  );
}

/** Splits entries into PutEvents requests within the limits, in order. */
export function batchEntries<E extends ReturnType<typeof toPutEventsEntry>>(entries: E[]): E[][] {
  const batches: E[][] = [];
  let batch: E[] = [];
  let bytes = 0;
  for (const e of entries) {
    const size = entrySize(e);
    if (batch.length === PUT_EVENTS_LIMITS.entries || bytes + size > PUT_EVENTS_LIMITS.bytes) {
      if (batch.length > 0) batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(e);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

export class EventBridgePublisher implements StateChangePublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly opts: {
      /** Bus name or ARN. */
      eventBusName: string;
      log?: (msg: string, fields?: Record<string, unknown>) => void;
      /** Attempts per entry (default 3). */
      attempts?: number;
    },
  ) {}

  async publish(events: readonly StateChangeEvent[]): Promise<void> {
    const entries: Entry[] = [];
    for (const e of events) {
      const entry = { ...toPutEventsEntry(e), EventBusName: this.opts.eventBusName };
      if (entrySize(entry) > PUT_EVENTS_LIMITS.bytes) {
        this.opts.log?.("events: an event exceeds PutEvents' 256 KB and is dropped", {
          detailType: e.detailType,
        });
        continue;
      }
      entries.push(entry);
    }
    await Promise.all(batchEntries(entries).map((b) => this.send(b)));
  }

  private async send(batch: Entry[]): Promise<void> {
    let pending = batch;
    const attempts = this.opts.attempts ?? 3;
    let lastError = "";
    for (let attempt = 1; attempt <= attempts && pending.length > 0; attempt++) {
      try {
        const out = await this.client.send(
          new PutEventsCommand({
            Entries: pending.map((e) => ({ ...e, Time: new Date(e.Time) })),
          }),
        );
        if (!out.FailedEntryCount) return;
        const results = out.Entries ?? [];
        // Result i belongs to entry i; a failed one has an ErrorCode.
        const failed = pending.filter((_, i) => results[i]?.ErrorCode);
        lastError = results.find((r) => r.ErrorCode)?.ErrorCode ?? "unknown";
        pending = failed;
      } catch (err) {
        lastError = (err as Error).name || (err as Error).message;
      }
    }
    if (pending.length > 0) {
      this.opts.log?.("events: PutEvents failed; events dropped", {
        count: pending.length,
        error: lastError,
        detailTypes: [...new Set(pending.map((e) => e.DetailType))],
      });
    }
  }
}

/**
 * Deletes what a poller handled: per queue, one natural batcher of DeleteMessageBatch requests
 * (10 receipt handles each, two in flight), so that a busy poller deletes in batches and an idle
 * one at once (lib/queue/batcher.ts).
 */
import { DeleteMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { Batcher } from "../queue/batcher.js";

/** Deletes received messages through one natural batcher per queue (DeleteMessageBatch takes 10). */
export class MessageDeleter {
  private readonly batchers = new Map<string, Batcher<string>>();
  private readonly all = new Set<Promise<void>>();

  constructor(
    private readonly sqs: SQSClient,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** Resolves once the delete was sent (errors are reported, not thrown). */
  add(url: string, receiptHandle: string): Promise<void> {
    let b = this.batchers.get(url);
    if (!b) {
      b = new Batcher<string>(
        async (handles) => {
          await this.sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: url,
              Entries: handles.map((h, i) => ({ Id: String(i), ReceiptHandle: h })),
            }),
          );
        },
        { maxBatch: 10, maxInFlight: 2 },
      );
      this.batchers.set(url, b);
    }
    const p = b.add(receiptHandle).catch(this.onError);
    this.all.add(p);
    void p.finally(() => this.all.delete(p));
    return p;
  }

  /** Waits for every delete under way. */
  async flush(): Promise<void> {
    await Promise.all(this.all);
  }
}

/**
 * FIFO batches as SQS hands them to Lambda's event source mapping: up to 10 messages of one message
 * group, in order, with at most one batch per group in flight ("Using Lambda with Amazon SQS").
 * The emulator (fauxqs) returns one message per group per receive and locks the group until that
 * message is deleted, so the simulation keeps the queue's messages itself: a fetcher takes every
 * message out as it arrives (through a client without simulated latency) and keeps it here per
 * group. Those calls stand in for SQS's own bookkeeping; the latency of the receive that returns
 * the batch and of the DeleteMessageBatch after the invocation are waited by the ESM's poller.
 * A message the function reports failed goes back to the front of its group.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";

/** The message group of a received message (receives ask for all system attributes). */
export function groupOf(m: Message): string {
  return (m.Attributes as Record<string, string> | undefined)?.MessageGroupId ?? "";
}

/**
 * The FIFO queue as the mapping's pollers see it: a fetcher long-polls the backend without
 * simulated latency and takes every message out at once (received, kept here per group in order,
 * deleted), so a group's backlog is here in full; {@link take} hands a free group's first messages
 * (up to the batch size) to one poller at a time.
 */
export class FifoBatches {
  private readonly pending = new Map<string, Message[]>();
  private readonly busy = new Set<string>();
  private waiters: Array<() => void> = [];
  private running = false;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly o: {
      /** A client of the same backend without the latency middleware. */
      raw: SQSClient;
      queueUrl: string;
      batchSize: number;
      onError?: (e: unknown) => void;
    },
  ) {}

  /** Starts the fetcher. */
  start(): void {
    this.running = true;
    this.abort = new AbortController();
    this.loop = this.fetch();
  }

  /** Stops the fetcher and wakes every waiting poller (their `take` resolves undefined). */
  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    this.wake();
    await this.loop;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async fetch(): Promise<void> {
    while (this.running) {
      try {
        const r = await this.o.raw.send(
          new ReceiveMessageCommand({
            QueueUrl: this.o.queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 20,
            MessageSystemAttributeNames: ["All"],
          }),
          { abortSignal: this.abort.signal },
        );
        await this.absorb(r.Messages ?? []);
      } catch (e) {
        if (!this.running) return;
        this.o.onError?.(e);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  /** Keeps received messages per group, in order, and takes them out of the queue. */
  private async absorb(msgs: readonly Message[]): Promise<void> {
    if (msgs.length === 0) return;
    for (const m of msgs) {
      const g = groupOf(m);
      const list = this.pending.get(g) ?? [];
      list.push(m);
      this.pending.set(g, list);
    }
    this.wake();
    await this.o.raw.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.o.queueUrl,
        Entries: msgs.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }

  /** Whether a group with pending messages is free for a poller. */
  hasFree(): boolean {
    return this.freeGroup() !== undefined;
  }

  private freeGroup(): string | undefined {
    for (const [g, list] of this.pending) if (list.length > 0 && !this.busy.has(g)) return g;
    return undefined;
  }

  /**
   * The first messages (up to the batch size) of a free group, which stays busy until
   * {@link release}; waits until one is free. @returns undefined once stopped.
   */
  async take(): Promise<{ group: string; msgs: Message[] } | undefined> {
    for (;;) {
      if (!this.running) return undefined;
      const group = this.freeGroup();
      if (group !== undefined) {
        this.busy.add(group);
        const msgs = (this.pending.get(group) ?? []).splice(0, this.o.batchSize);
        return { group, msgs };
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** Frees `group`; `failed` (in order) goes back to the front of it. */
  release(group: string, failed: readonly Message[]): void {
    if (failed.length > 0) this.pending.set(group, [...failed, ...(this.pending.get(group) ?? [])]);
    this.busy.delete(group);
    if (this.hasFree()) this.wake();
  }
}

/**
 * Sending to Shoal's SQS queues: task queues per worker group and priority tier, and the events
 * FIFO queue. Batches of 10 (SendMessageBatch's limit); a partial batch failure throws, so the
 * caller's message is retried and the idempotent receivers absorb the repeats.
 */
import {
  ChangeMessageVisibilityCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { resourceNames } from "../aws/config.js";
import type { Priority } from "../core/model.js";
import { Batcher } from "./batcher.js";
import {
  type DispatcherMessage,
  dispatcherMessageDedupId,
  packTaskEvents,
  type TaskMessage,
} from "./messages.js";
import type { Queues } from "./queues.js";

/**
 * Creates the queues a send finds missing (SHOAL_AUTO_CREATE_QUEUES: standalone and its workers,
 * whose emulators start empty); provisioning lives with standalone (lib/standalone/provision.ts).
 */
export interface QueueCreator {
  /** Creates a worker group's task queues, one per priority tier. */
  taskQueues(group: string): Promise<unknown>;
  /** Creates the signals queue. */
  signalsQueue(): Promise<unknown>;
}

/** SendMessageBatch takes 10 entries and 1 MiB in all; a margin for attributes. */
const MAX_BATCH_BYTES = 1024 * 1024 - 16 * 1024;

export class SqsQueues implements Queues {
  private readonly urls = new Map<string, Promise<string>>();
  private readonly dispatcherBatcher = new Batcher<DispatcherMessage>(
    (events) => this.sendToDispatcherNow(events),
    {
      maxBatch: 10,
      maxInFlight: 1,
    },
  );

  constructor(
    private readonly sqs: SQSClient,
    private readonly opts: {
      prefix: string;
      eventsQueueUrl?: string;
      /** Creates queues found missing; absent: a missing queue is an error. */
      createQueues?: QueueCreator;
      /** Merge event sends of concurrent callers into batches (see sendToDispatcher). */
      coalesce?: boolean;
    },
  ) {}

  private url(name: string, create?: () => Promise<unknown>): Promise<string> {
    let p = this.urls.get(name);
    if (!p) {
      p = (async () => {
        try {
          const r = await this.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
          return r.QueueUrl as string;
        } catch (e) {
          if (
            !(e instanceof QueueDoesNotExist || (e as Error).name === "QueueDoesNotExist") ||
            !create
          ) {
            throw e;
          }
          await create();
          const r = await this.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
          return r.QueueUrl as string;
        }
      })();
      p.catch(() => this.urls.delete(name));
      this.urls.set(name, p);
    }
    return p;
  }

  /** URL of a task queue; creates the group's queues first when it may (`createQueues`). */
  taskQueueUrl(group: string, priority: Priority): Promise<string> {
    const name = resourceNames(this.opts.prefix).taskQueue(group, priority);
    const create = this.opts.createQueues;
    return this.url(name, create ? () => create.taskQueues(group) : undefined);
  }

  eventsQueueUrl(): Promise<string> {
    if (this.opts.eventsQueueUrl) return Promise.resolve(this.opts.eventsQueueUrl);
    return this.url(resourceNames(this.opts.prefix).eventsQueue);
  }

  /** Batches of at most 10 entries and MAX_BATCH_BYTES of bodies (SendMessageBatch limits). */
  private async sendBatches(url: string, entries: SendMessageBatchRequestEntry[]): Promise<void> {
    const chunks: SendMessageBatchRequestEntry[][] = [];
    let chunk: SendMessageBatchRequestEntry[] = [];
    let bytes = 0;
    for (const e of entries) {
      const size = Buffer.byteLength(e.MessageBody ?? "");
      if (chunk.length === 10 || (chunk.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
        chunks.push(chunk);
        chunk = [];
        bytes = 0;
      }
      chunk.push(e);
      bytes += size;
    }
    if (chunk.length > 0) chunks.push(chunk);
    const sends: Promise<void>[] = [];
    for (const chunk of chunks) {
      sends.push(
        this.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: chunk })).then((r) => {
          if (r.Failed && r.Failed.length > 0) {
            const f = r.Failed[0];
            throw new Error(
              `SendMessageBatch to ${url}: ${r.Failed.length} failed (${f?.Code}: ${f?.Message})`,
            );
          }
        }),
      );
    }
    await Promise.all(sends);
  }

  async sendTasks(
    items: Array<{ message: TaskMessage; workerGroup: string; delaySeconds: number }>,
  ): Promise<void> {
    const byQueue = new Map<string, SendMessageBatchRequestEntry[]>();
    for (const [i, item] of items.entries()) {
      const url = await this.taskQueueUrl(item.workerGroup, item.message.instancePriority);
      const list = byQueue.get(url) ?? [];
      byQueue.set(url, list);
      list.push({
        Id: String(i),
        MessageBody: JSON.stringify(item.message),
        DelaySeconds: Math.min(900, Math.max(0, Math.round(item.delaySeconds))),
      });
    }
    await Promise.all([...byQueue].map(([url, entries]) => this.sendBatches(url, entries)));
  }

  /**
   * Sends dispatcher messages (task events, signals, timer messages) to the events queue. With `coalesce`, single events travel through a natural batcher
   * (sent at once unless a send is under way, then together with what queued meanwhile):
   * fewer requests when many tasks end together, no added latency when one does. Resolves once
   * the events were accepted; rejects if they were not.
   */
  sendToDispatcher(events: DispatcherMessage[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    if (!this.opts.coalesce || events.length > 1) return this.sendToDispatcherNow(events);
    return this.dispatcherBatcher.add(events[0] as DispatcherMessage);
  }

  private async sendToDispatcherNow(events: DispatcherMessage[]): Promise<void> {
    const url = await this.eventsQueueUrl();
    await this.sendBatches(
      url,
      packTaskEvents(events).map((e, i) => ({
        Id: String(i),
        MessageBody: JSON.stringify(e),
        MessageGroupId: e.instanceId,
        MessageDeduplicationId: dispatcherMessageDedupId(e),
      })),
    );
  }

  async sendDelayedSignal(
    event: Extract<DispatcherMessage, { kind: "command" }>,
    delaySeconds: number,
  ): Promise<void> {
    const create = this.opts.createQueues;
    const url = await this.url(
      resourceNames(this.opts.prefix).signalsQueue,
      create ? () => create.signalsQueue() : undefined,
    );
    await this.sendBatches(url, [
      {
        Id: "0",
        MessageBody: JSON.stringify(event),
        DelaySeconds: Math.max(0, Math.min(900, Math.ceil(delaySeconds))),
      },
    ]);
  }

  async extendVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.min(43_200, Math.round(seconds)),
      }),
    );
  }

  queueUrlFromArn(arn: string): Promise<string> {
    const name = arn.split(":").pop() ?? arn;
    return this.url(name);
  }
}

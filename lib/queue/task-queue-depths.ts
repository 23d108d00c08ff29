/**
 * How many task messages wait in a worker group's queues, per priority tier: SQS's
 * `ApproximateNumberOfMessages` (visible messages; "approximate" because SQS is distributed and
 * counts are eventually consistent: SQS Developer Guide, "Available CloudWatch metrics" and
 * GetQueueAttributes). `shoal explain` uses it to say "queued behind approximately N
 * higher-priority tasks". Reading never creates a queue.
 */
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { resourceNames } from "../aws/config.js";
import { PRIORITIES, type Priority } from "../core/model.js";

/** Visible messages per tier, or "missing" when the group has no task queues. */
export type TierDepths = Record<Priority, number> | "missing";

/** The port (one implementation: SQS; tests run it against fauxqs). */
export interface TaskQueueDepths {
  /** Approximate visible messages of each priority tier of `group`'s task queues. */
  depths(group: string): Promise<TierDepths>;
}

function isMissingQueue(e: unknown): boolean {
  const name = (e as { name?: string })?.name;
  return (
    e instanceof QueueDoesNotExist ||
    name === "QueueDoesNotExist" ||
    name === "AWS.SimpleQueueService.NonExistentQueue"
  );
}

export class SqsTaskQueueDepths implements TaskQueueDepths {
  /** Queue URLs by name: they never change once a queue exists. */
  private readonly urls = new Map<string, string>();

  constructor(
    private readonly sqs: SQSClient,
    private readonly prefix: string,
  ) {}

  private async url(name: string): Promise<string> {
    const known = this.urls.get(name);
    if (known) return known;
    const r = await this.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    const url = r.QueueUrl as string;
    this.urls.set(name, url);
    return url;
  }

  async depths(group: string): Promise<TierDepths> {
    const names = resourceNames(this.prefix);
    try {
      const counts = await Promise.all(
        PRIORITIES.map(async (p) => {
          const r = await this.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: await this.url(names.taskQueue(group, p)),
              AttributeNames: ["ApproximateNumberOfMessages"],
            }),
          );
          return Number(r.Attributes?.ApproximateNumberOfMessages ?? 0);
        }),
      );
      return Object.fromEntries(PRIORITIES.map((p, i) => [p, counts[i] ?? 0])) as Record<
        Priority,
        number
      >;
    } catch (e) {
      if (isMissingQueue(e)) return "missing";
      throw e;
    }
  }
}

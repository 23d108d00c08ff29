/**
 * How many task messages a worker group's queues hold, per priority tier: SQS's
 * `ApproximateNumberOfMessages` (visible: waiting to be received) and
 * `ApproximateNumberOfMessagesNotVisible` (in flight: received by a worker, running or held for a
 * free slot, not deleted yet). "Approximate" because SQS is distributed and counts are eventually
 * consistent (SQS Developer Guide, "Available CloudWatch metrics", and GetQueueAttributes).
 * `shoal explain` uses them to say "queued behind approximately N higher-priority tasks" or
 * "received by a worker, waiting for a free slot". Reading never creates a queue.
 */
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { resourceNames } from "../aws/config.js";
import { PRIORITIES, type Priority } from "../core/model.js";

/** Messages per tier, or "missing" when the group has no task queues. */
export type TierDepths =
  | {
      /** Visible: waiting to be received. */
      visible: Record<Priority, number>;
      /** In flight: received, not deleted yet. */
      inFlight: Record<Priority, number>;
    }
  | "missing";

/** The port (one implementation: SQS; tests run it against fauxqs). */
export interface TaskQueueDepths {
  /** Approximate visible and in-flight messages of each priority tier of `group`'s task queues. */
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
              AttributeNames: [
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
              ],
            }),
          );
          return [
            Number(r.Attributes?.ApproximateNumberOfMessages ?? 0),
            Number(r.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
          ] as const;
        }),
      );
      const tiers = (i: 0 | 1) =>
        Object.fromEntries(PRIORITIES.map((p, t) => [p, counts[t]?.[i] ?? 0])) as Record<
          Priority,
          number
        >;
      return { visible: tiers(0), inFlight: tiers(1) };
    } catch (e) {
      if (isMissingQueue(e)) return "missing";
      throw e;
    }
  }
}

/**
 * The queue port of the engine: what the dispatcher, worker, sweeper and API send. One adapter
 * implements it, SQS (lib/queue/sqs-queues.ts); tests run it against fauxqs or stand-ins.
 */
import type { DispatcherMessage, TaskMessage } from "./messages.js";

/** The queue side of the engine. */
export interface Queues {
  sendTasks(
    items: Array<{ message: TaskMessage; workerGroup: string; delaySeconds: number }>,
  ): Promise<void>;
  sendToDispatcher(events: DispatcherMessage[]): Promise<void>;
  /**
   * Signals a command after `delaySeconds` (0..900) through the standard signals queue, which the
   * dispatcher also consumes (the events queue is FIFO and cannot delay one message).
   */
  sendDelayedSignal(
    event: Extract<DispatcherMessage, { kind: "command" }>,
    delaySeconds: number,
  ): Promise<void>;
  /** Keeps a received message invisible for `seconds` more (long tasks). */
  extendVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void>;
  /** URL of a queue from its ARN (SQS event records carry the ARN). */
  queueUrlFromArn(arn: string): Promise<string>;
}

/**
 * Errors the engine throws on purpose. Anything else thrown by a dispatcher step is a fault: the
 * dispatcher logs it and the message is delivered again.
 */
import { ShoalError } from "../core/errors.js";

/**
 * A message that cannot be applied yet: its instance is not written yet, another dispatcher
 * holds the command's claim, or the instance changed under a conditional write three times.
 * Nothing was recorded (effects done before it are idempotent).
 *
 * What the caller does: report the message (and the rest of its FIFO group) as a batch item
 * failure, without logging it, so that SQS delivers it again after its visibility timeout
 * (lib/engine/dispatcher.ts `handleBatch`). `retryable` is true.
 */
export class RetryLater extends ShoalError {
  /** @param options.cause what made the step give up, when there was an error. */
  constructor(
    message = "not applicable yet; delivered again later",
    options: { cause?: unknown } = {},
  ) {
    super(message, { ...options, retryable: true });
  }
}

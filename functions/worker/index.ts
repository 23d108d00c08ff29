/** Lambda handler of the worker: SQS batches from a task queue (ReportBatchItemFailures). */
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { configFromEnv } from "../../lib/aws/config.js";
import { createRuntime } from "../../lib/runtime/runtime.js";

/** Built at cold start from the function's environment, reused while warm. */
const rt = createRuntime(configFromEnv(process.env));

/**
 * The invocation's end bounds its attempts: a long one's lease is set past it once, never renewed
 * (lib/engine/worker.ts handleBatch).
 */
export const handler = (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> =>
  rt.worker.handleBatch(
    event.Records,
    context ? { deadline: Date.now() + context.getRemainingTimeInMillis() } : {},
  );

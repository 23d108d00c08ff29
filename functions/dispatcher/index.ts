/** Lambda handler of the dispatcher: SQS batches from the events FIFO queue (ReportBatchItemFailures). */
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { configFromEnv } from "../../lib/aws/config.js";
import { createRuntime } from "../../lib/runtime/runtime.js";

/** Built at cold start from the function's environment, reused while warm. */
const rt = createRuntime(configFromEnv(process.env));

export const handler = (event: SQSEvent): Promise<SQSBatchResponse> =>
  rt.dispatcher.handleBatch(event.Records);

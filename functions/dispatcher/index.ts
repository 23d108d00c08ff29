/** Lambda handler of the dispatcher: SQS batches from the events FIFO queue (ReportBatchItemFailures). */
import type { SqsBatchResponse, SqsEvent } from "../../lib/engine/lambda-events.js";
import { runtime } from "../../lib/runtime/runtime.js";

export const handler = (event: SqsEvent): Promise<SqsBatchResponse> =>
  runtime().dispatcher.handleBatch(event.Records);

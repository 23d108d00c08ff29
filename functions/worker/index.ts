/** Lambda handler of the worker: SQS batches from a task queue (ReportBatchItemFailures). */
import type { SqsBatchResponse, SqsEvent } from "../../lib/engine/lambda-events.js";
import { runtime } from "../../lib/runtime/runtime.js";

export const handler = (event: SqsEvent): Promise<SqsBatchResponse> =>
  runtime().worker.handleBatch(event.Records);

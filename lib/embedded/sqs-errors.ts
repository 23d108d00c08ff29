/**
 * SQS errors as the SDK v3 client throws them (`name` is the SDK's exception name), and the query
 * code each carries on the wire (`x-amzn-query-error: <code>;Sender`), from the `awsQueryError`
 * traits of @aws-sdk/client-sqs's schema: the JSON protocol's SDK resolves the error class from
 * that header.
 */
import { EmbeddedServiceError } from "./client-stack.js";

/** SDK exception name → the query-compatible code and HTTP status SQS answers with. */
const QUERY_CODES: Record<string, [code: string, status: number]> = {
  BatchEntryIdsNotDistinct: ["AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400],
  BatchRequestTooLong: ["AWS.SimpleQueueService.BatchRequestTooLong", 400],
  EmptyBatchRequest: ["AWS.SimpleQueueService.EmptyBatchRequest", 400],
  InvalidBatchEntryId: ["AWS.SimpleQueueService.InvalidBatchEntryId", 400],
  MessageNotInflight: ["AWS.SimpleQueueService.MessageNotInflight", 400],
  PurgeQueueInProgress: ["AWS.SimpleQueueService.PurgeQueueInProgress", 403],
  QueueDeletedRecently: ["AWS.SimpleQueueService.QueueDeletedRecently", 400],
  QueueDoesNotExist: ["AWS.SimpleQueueService.NonExistentQueue", 400],
  QueueNameExists: ["QueueAlreadyExists", 400],
  ReceiptHandleIsInvalid: ["ReceiptHandleIsInvalid", 404],
  TooManyEntriesInBatchRequest: ["AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400],
  UnsupportedOperation: ["AWS.SimpleQueueService.UnsupportedOperation", 400],
};

/** The query code of an error name (the name itself when SQS uses it as the code). */
export function queryCode(name: string): { code: string; status: number } {
  const q = QUERY_CODES[name];
  return q ? { code: q[0], status: q[1] } : { code: name, status: 400 };
}

/**
 * An SQS error as the SDK throws it.
 * @param name the SDK's exception name (`QueueDoesNotExist`, `InvalidParameterValue`, …).
 */
export function sqsError(name: string, message: string): EmbeddedServiceError {
  return new EmbeddedServiceError(name, message, { status: queryCode(name).status });
}

/** `InvalidParameterValue` naming the parameter and why, in SQS's words. */
export function invalidParameter(
  param: string,
  value: unknown,
  reason: string,
): EmbeddedServiceError {
  return sqsError(
    "InvalidParameterValue",
    `Value ${String(value)} for parameter ${param} is invalid. Reason: ${reason}`,
  );
}

/** `MissingParameter`: a required parameter is absent. */
export function missingParameter(param: string): EmbeddedServiceError {
  return sqsError("MissingParameter", `The request must contain the parameter ${param}.`);
}

/** `QueueDoesNotExist`, as SQS words it. */
export function noSuchQueue(): EmbeddedServiceError {
  return sqsError("QueueDoesNotExist", "The specified queue does not exist.");
}

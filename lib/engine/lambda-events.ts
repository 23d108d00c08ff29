/**
 * The Lambda event shapes Shoal's handlers take (the parts they read), as AWS documents them:
 * SQS event source mapping batches ("Using Lambda with Amazon SQS") and API Gateway HTTP API
 * payload format 2.0. The standalone runtime builds exactly these.
 */

export interface SqsRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: {
    ApproximateReceiveCount: string;
    SentTimestamp: string;
    MessageGroupId?: string;
    MessageDeduplicationId?: string;
    [k: string]: string | undefined;
  };
  messageAttributes: Record<string, unknown>;
  md5OfBody: string;
  eventSource: "aws:sqs";
  eventSourceARN: string;
  awsRegion: string;
}

export interface SqsEvent {
  Records: SqsRecord[];
}

/** Partial batch response (ReportBatchItemFailures). */
export interface SqsBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

export interface HttpApiEvent {
  version: "2.0";
  routeKey: string;
  rawPath: string;
  rawQueryString: string;
  headers: Record<string, string>;
  queryStringParameters?: Record<string, string>;
  body?: string;
  isBase64Encoded: boolean;
  requestContext: {
    http: { method: string; path: string; protocol: string; sourceIp: string; userAgent: string };
    requestId: string;
    timeEpoch: number;
    [k: string]: unknown;
  };
}

export interface HttpApiResult {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
}

/** The EventBridge scheduled event the sweeper receives (fields it reads). */
export interface ScheduledEvent {
  "detail-type": "Scheduled Event";
  time: string;
  [k: string]: unknown;
}

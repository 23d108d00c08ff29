/**
 * The Lambda events that the standalone runtime (and tests and benchmarks driving handlers by
 * hand) give to Shoal's handlers. They are built as Lambda would send them: SQS event source
 * mapping records ("Using Lambda with Amazon SQS") and API Gateway HTTP API payload format 2.0.
 * The types are those of `@types/aws-lambda`.
 */
import type { Message } from "@aws-sdk/client-sqs";
import type { APIGatewayProxyEventV2, SQSRecord } from "aws-lambda";

/** The account id the emulators use (and that stands in for one where no account exists). */
export const LOCAL_ACCOUNT = "000000000000";

/** The ARN of a queue, from its URL (`…/<account>/<name>`). */
export function queueArn(url: string, region: string): string {
  const name = url.split("/").pop() ?? url;
  const account = url.split("/").slice(-2, -1)[0] || LOCAL_ACCOUNT;
  return `arn:aws:sqs:${region}:${account}:${name}`;
}

/**
 * One record of an SQS event, from a received message. System attributes the queue returned
 * (receive with `MessageSystemAttributeNames: ["All"]`) are kept; those it left out get what
 * a first delivery would carry, sent and received `nowMs` (ms since the epoch).
 */
export function sqsRecordOf(m: Message, arn: string, region: string, nowMs: number): SQSRecord {
  return {
    messageId: m.MessageId ?? "",
    receiptHandle: m.ReceiptHandle ?? "",
    body: m.Body ?? "",
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: String(nowMs),
      SenderId: LOCAL_ACCOUNT,
      ApproximateFirstReceiveTimestamp: String(nowMs),
      ...(m.Attributes as Record<string, string> | undefined),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: arn,
    awsRegion: region,
  };
}

/** An HTTP request, as the API handler's event is built from it. */
export interface HttpRequestParts {
  method: string;
  /** The path, without the query string. */
  path: string;
  /** The query string without `?` ("" when none). */
  rawQueryString?: string;
  /** Header names lowercased, repeated values comma-joined (as API Gateway passes them). */
  headers?: Record<string, string>;
  body?: string;
  /** `body` is base64 (binary bodies). */
  isBase64Encoded?: boolean;
  sourceIp?: string;
  requestId: string;
  /** When the request arrived, ms since the epoch. */
  timeEpoch: number;
  protocol?: string;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `requestContext.time` as API Gateway writes it: `12/Mar/2020:19:03:58 +0000`. */
function requestTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return (
    `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`
  );
}

/**
 * The API Gateway HTTP API (payload 2.0) event of a request to the `$default` route and stage.
 * Query parameters are derived from the raw query string (repeated values comma-joined); the
 * domain comes from the `host` header (`localhost` without one).
 */
export function httpApiEvent(r: HttpRequestParts): APIGatewayProxyEventV2 {
  const headers = r.headers ?? {};
  const rawQueryString = r.rawQueryString ?? "";
  const qs: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(rawQueryString)) {
    qs[k] = k in qs ? `${qs[k]},${v}` : v;
  }
  const domainName = (headers.host ?? "localhost").replace(/:\d+$/, "");
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: r.path,
    rawQueryString,
    headers,
    ...(Object.keys(qs).length ? { queryStringParameters: qs } : {}),
    ...(r.body !== undefined ? { body: r.body } : {}),
    isBase64Encoded: r.isBase64Encoded ?? false,
    requestContext: {
      accountId: LOCAL_ACCOUNT,
      apiId: "local",
      domainName,
      domainPrefix: domainName.split(".")[0] ?? domainName,
      http: {
        method: r.method,
        path: r.path,
        protocol: r.protocol ?? "HTTP/1.1",
        sourceIp: r.sourceIp ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: r.requestId,
      routeKey: "$default",
      stage: "$default",
      time: requestTime(r.timeEpoch),
      timeEpoch: r.timeEpoch,
    },
  };
}

/**
 * DynamoDB's wire protocol (awsJson1_0) on the embedded engine: one POST whose `X-Amz-Target` is
 * `DynamoDB_20120810.<Operation>` and whose body is the JSON request, answered with the JSON
 * output (binary values base64, dates as epoch seconds) or an error
 * `{"__type":"com.amazonaws.dynamodb.v20120810#<Name>","message":…}` with status 400 (500 for
 * a server fault). The HTTP server around it is lib/embedded/http-front.ts.
 */
import { randomUUID } from "node:crypto";
import type { EmbeddedDynamoDBClient } from "./dynamodb-client.js";

/** An HTTP answer. */
export interface DynamoHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const PREFIX = "com.amazonaws.dynamodb.v20120810#";

function answer(status: number, body: unknown, requestId: string): DynamoHttpResponse {
  return {
    status,
    headers: { "content-type": "application/x-amz-json-1.0", "x-amzn-requestid": requestId },
    body: JSON.stringify(body, function (this: Record<string, unknown>, key, value) {
      const raw = this[key];
      return raw instanceof Date ? raw.getTime() / 1000 : value;
    }),
  };
}

/**
 * Serves one DynamoDB request.
 * @param target the `X-Amz-Target` header (`DynamoDB_20120810.PutItem`, …).
 * @param body the request body (JSON; empty means `{}`).
 * @returns the status, headers and JSON body to answer with; never throws.
 */
export async function handleDynamoDbHttp(
  client: EmbeddedDynamoDBClient,
  target: string | undefined,
  body: string,
): Promise<DynamoHttpResponse> {
  const requestId = randomUUID();
  const m = /^DynamoDB_20120810\.(\w+)$/.exec(target ?? "");
  if (!m)
    return answer(
      400,
      {
        __type: `${PREFIX}UnknownOperationException`,
        message: `unknown target ${target ?? "(none)"}`,
      },
      requestId,
    );
  let input: unknown;
  try {
    input = body.trim() === "" ? {} : JSON.parse(body);
    if (!input || typeof input !== "object" || Array.isArray(input))
      throw new Error("not an object");
  } catch (e) {
    return answer(
      400,
      {
        __type: `${PREFIX}SerializationException`,
        message: `the body is not a JSON object: ${(e as Error).message}`,
      },
      requestId,
    );
  }
  try {
    return answer(200, client.engine.execute(m[1] as string, input), requestId);
  } catch (e) {
    const err = e as {
      name?: string;
      message?: string;
      Item?: unknown;
      $metadata?: { httpStatusCode?: number };
    };
    const status = err.$metadata?.httpStatusCode;
    if (status && err.name)
      return answer(
        status,
        {
          __type: `${PREFIX}${err.name}`,
          message: err.message ?? "",
          ...(err.Item ? { Item: err.Item } : {}),
        },
        requestId,
      );
    return answer(
      500,
      { __type: `${PREFIX}InternalServerError`, message: err.message ?? String(e) },
      requestId,
    );
  }
}

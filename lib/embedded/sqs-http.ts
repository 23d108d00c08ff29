/**
 * The SQS wire protocol over the embedded engine: the AWS JSON 1.0 protocol the current
 * @aws-sdk/client-sqs speaks (POST with `X-Amz-Target: AmazonSQS.<Operation>` and a JSON body),
 * errors as SQS answers them (`__type` `com.amazonaws.sqs#<Name>`, and the `x-amzn-query-error`
 * header `<query code>;Sender` from which the SDK picks the error class). Blobs (message
 * attributes' BinaryValue) travel base64-encoded. The HTTP server around it is the caller's.
 */
import { randomUUID } from "node:crypto";
import type { EmbeddedSQSClient } from "./sqs-client.js";
import { queryCode } from "./sqs-errors.js";

/** An HTTP answer. */
export interface SqsHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

type Json = Record<string, unknown>;

function mapBinary(attrs: unknown, f: (v: unknown) => unknown): void {
  if (!attrs || typeof attrs !== "object") return;
  for (const a of Object.values(attrs as Record<string, Json>)) {
    if (a && typeof a === "object" && a.BinaryValue !== undefined) a.BinaryValue = f(a.BinaryValue);
  }
}

/** Request blobs: base64 → bytes. */
function decodeInput(input: Json): Json {
  const fromB64 = (v: unknown) => new Uint8Array(Buffer.from(String(v), "base64"));
  mapBinary(input.MessageAttributes, fromB64);
  if (Array.isArray(input.Entries))
    for (const e of input.Entries as Json[]) mapBinary(e?.MessageAttributes, fromB64);
  return input;
}

/** Answer blobs: bytes → base64. */
function encodeOutput(output: Json): Json {
  const toB64 = (v: unknown) => Buffer.from(v as Uint8Array).toString("base64");
  if (Array.isArray(output.Messages))
    for (const m of output.Messages as Json[]) mapBinary(m.MessageAttributes, toB64);
  return output;
}

function errorResponse(
  name: string,
  message: string,
  status: number,
  requestId: string,
): SqsHttpResponse {
  const { code } = queryCode(name);
  return {
    status,
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amzn-requestid": requestId,
      "x-amzn-query-error": `${code};${status >= 500 ? "Receiver" : "Sender"}`,
    },
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${name}`, message }),
  };
}

/**
 * Serves one SQS request.
 * @param target the `X-Amz-Target` header (`AmazonSQS.SendMessage`, …).
 * @param body the request body (JSON; empty means `{}`).
 * @returns the status, headers and JSON body to answer with; never throws.
 */
export async function handleSqsHttp(
  client: EmbeddedSQSClient,
  target: string | undefined,
  body: string,
): Promise<SqsHttpResponse> {
  const requestId = randomUUID();
  const m = /^AmazonSQS\.(\w+)$/.exec(target ?? "");
  if (!m)
    return errorResponse(
      "UnknownOperationException",
      `unknown target ${target ?? "(none)"}`,
      400,
      requestId,
    );
  let input: Json;
  try {
    input = body.trim() === "" ? {} : (JSON.parse(body) as Json);
    if (!input || typeof input !== "object" || Array.isArray(input))
      throw new Error("not an object");
  } catch (e) {
    return errorResponse(
      "SerializationException",
      `the body is not a JSON object: ${(e as Error).message}`,
      400,
      requestId,
    );
  }
  try {
    const output = await client.call(m[1] as string, decodeInput(input));
    return {
      status: 200,
      headers: { "content-type": "application/x-amz-json-1.0", "x-amzn-requestid": requestId },
      body: JSON.stringify(encodeOutput(output)),
    };
  } catch (e) {
    const err = e as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const status = err.$metadata?.httpStatusCode;
    if (status && err.name) return errorResponse(err.name, err.message ?? "", status, requestId);
    return errorResponse("InternalError", err.message ?? String(e), 500, requestId);
  }
}

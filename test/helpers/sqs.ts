/** Receiving SQS messages as the Lambda event records the handlers take (for driving handlers by hand). */
import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { sqsClient } from "../../lib/aws/clients.js";
import type { SqsRecord } from "../../lib/engine/lambda-events.js";

export async function receiveRecords(
  url: string,
  opts: { max?: number; waitSeconds?: number } = {},
): Promise<SqsRecord[]> {
  const r = await sqsClient().send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: opts.max ?? 10,
      WaitTimeSeconds: opts.waitSeconds ?? 1,
      MessageSystemAttributeNames: ["All"],
    }),
  );
  const name = url.split("/").pop() ?? "";
  return (r.Messages ?? []).map((m) => ({
    messageId: m.MessageId ?? "",
    receiptHandle: m.ReceiptHandle ?? "",
    body: m.Body ?? "",
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: "0",
      ...(m.Attributes as Record<string, string>),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${name}`,
    awsRegion: "us-east-1",
  }));
}

export async function deleteRecords(url: string, records: SqsRecord[]): Promise<void> {
  for (const r of records) {
    await sqsClient().send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: r.receiptHandle }),
    );
  }
}

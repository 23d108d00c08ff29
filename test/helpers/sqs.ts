/** Receiving SQS messages as the Lambda event records the handlers take (for driving handlers by hand). */
import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import type { SQSRecord } from "aws-lambda";
import { LOCAL_ACCOUNT, sqsRecordOf } from "../../lib/standalone/lambda-events.js";
import { testClients } from "./aws-env.js";

export async function receiveRecords(
  url: string,
  opts: { max?: number; waitSeconds?: number } = {},
): Promise<SQSRecord[]> {
  const r = await testClients().sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: opts.max ?? 10,
      WaitTimeSeconds: opts.waitSeconds ?? 1,
      MessageSystemAttributeNames: ["All"],
    }),
  );
  const arn = `arn:aws:sqs:us-east-1:${LOCAL_ACCOUNT}:${url.split("/").pop() ?? ""}`;
  return (r.Messages ?? []).map((m) => sqsRecordOf(m, arn, "us-east-1", 0));
}

export async function deleteRecords(url: string, records: SQSRecord[]): Promise<void> {
  for (const r of records) {
    await testClients().sqs.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: r.receiptHandle }),
    );
  }
}

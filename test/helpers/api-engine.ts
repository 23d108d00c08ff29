/**
 * Driving the engine by hand for the HTTP API tests (no pollers): hand-built SQS records fed to
 * the dispatcher and worker of the server `startApiServer()` started (api-client.ts).
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import type { SQSRecord } from "aws-lambda";
import { expect } from "vitest";
import { startCommandId } from "../../lib/engine/commands.js";
import type { DispatcherMessage, TaskMessage } from "../../lib/queue/messages.js";
import { LOCAL_ACCOUNT } from "../../lib/standalone/lambda-events.js";
import { apiServer, get, post } from "./api-client.js";
import { testClients } from "./aws-env.js";
import { until } from "./poll.js";

let seq = 0;
export function sqsRecord(body: string, groupId?: string, queueName = "events.fifo"): SQSRecord {
  seq++;
  const now = String(Date.now());
  return {
    messageId: `msg-${seq}`,
    receiptHandle: `rh-${seq}`,
    body,
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: now,
      SenderId: LOCAL_ACCOUNT,
      ApproximateFirstReceiveTimestamp: now,
      ...(groupId ? { MessageGroupId: groupId, MessageDeduplicationId: `d-${seq}` } : {}),
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: `arn:aws:sqs:us-east-1:${LOCAL_ACCOUNT}:${queueName}`,
    awsRegion: "us-east-1",
  };
}

export async function dispatch(event: DispatcherMessage): Promise<void> {
  const r = await apiServer().rt.dispatcher.handleBatch([
    sqsRecord(JSON.stringify(event), event.instanceId),
  ]);
  expect(r.batchItemFailures).toEqual([]);
}

/** Creates the instance record and dispatches its first tasks (instance → RUNNING). */
export async function startInstance(instanceId: string): Promise<void> {
  await dispatch({ kind: "command", commandId: startCommandId(instanceId), instanceId });
}

/** Receives the task message the dispatcher sent for this instance from the task queues. */
export async function receiveTask(
  instanceId: string,
): Promise<{ record: SQSRecord; msg: TaskMessage }> {
  return until(
    async () => {
      for (const url of apiServer().aws.taskUrls) {
        const r = await testClients().sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 1,
          }),
        );
        for (const m of r.Messages ?? []) {
          const msg = JSON.parse(m.Body ?? "{}") as TaskMessage;
          if (msg.instanceId !== instanceId) continue;
          await testClients().sqs.send(
            new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }),
          );
          const queueName = url.split("/").pop() ?? url;
          return { record: sqsRecord(m.Body ?? "", undefined, queueName), msg };
        }
      }
      return undefined;
    },
    { what: `a task message of ${instanceId}` },
  );
}

/** Drives a one-task instance to SUCCESS: dispatcher, worker (real shell), dispatcher. */
export async function runToSuccess(instanceId: string): Promise<void> {
  await startInstance(instanceId);
  const { record, msg } = await receiveTask(instanceId);
  const w = await apiServer().rt.worker.handleBatch([record]);
  expect(w.batchItemFailures).toEqual([]);
  await dispatch({
    kind: "task",
    instanceId,
    code: msg.code,
    attempt: msg.attempt,
    state: "SUCCESS",
  });
  await until(async () => (await get(`/v1/instances/${instanceId}`)).body?.state === "SUCCESS", {
    what: `${instanceId} SUCCESS`,
  });
}

// ---- tests ----------------------------------------------------------------------------------

/**
 * Runs the next task message of `instanceId` on the worker (a real shell) and hands its result
 * to the dispatcher, as the task's state-change event would.
 * @returns the attempt as the worker left it.
 */
export async function runNextTask(
  instanceId: string,
): Promise<{ code: string; attempt: number; state: string }> {
  const { record, msg } = await receiveTask(instanceId);
  expect((await apiServer().rt.worker.handleBatch([record])).batchItemFailures).toEqual([]);
  const t = await apiServer().rt.engine.store.getTaskInstance(instanceId, msg.code, msg.attempt);
  const state = (t?.state ?? "FAILURE") as "SUCCESS";
  await dispatch({ kind: "task", instanceId, code: msg.code, attempt: msg.attempt, state });
  return { code: msg.code, attempt: msg.attempt, state };
}

/** Sends a control verb through the API and has the dispatcher carry it out. */
export async function control(
  instanceId: string,
  verb: "rerun" | "recover-failed" | "pause" | "resume" | "stop",
): Promise<void> {
  const inst = await apiServer().rt.engine.store.getInstance(instanceId);
  expect((await post(`/v1/instances/${instanceId}/${verb}`)).status).toBe(202);
  await dispatch({ kind: "command", commandId: `${verb}:${instanceId}:${inst?.rev}`, instanceId });
}

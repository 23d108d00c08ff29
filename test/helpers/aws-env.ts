/**
 * Points this test file's AWS clients at the shared emulators and creates a private set of
 * tables and queues (unique prefix), so test files never see each other's data.
 */
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { dynamoClient, resetClients, sqsClient } from "../../lib/aws/clients.js";
import { loadConfig, type ShoalConfig } from "../../lib/aws/config.js";
import { ensureEventsQueue, ensureTables, ensureTaskQueues } from "../../lib/aws/resources.js";

export interface TestAws {
  config: ShoalConfig;
  eventsUrl: string;
  taskUrls: string[];
}

export async function useTestAws(overrides: Record<string, string> = {}): Promise<TestAws> {
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
    AWS_ENDPOINT_URL_SQS: inject("sqsEndpoint"),
    SHOAL_PREFIX: `t${randomUUID().slice(0, 8)}`,
    SHOAL_QUIET: "true",
    ...overrides,
  });
  resetClients();
  const config = loadConfig();
  await ensureTables(dynamoClient() as never, config.tables);
  const eventsUrl = await ensureEventsQueue(sqsClient(), config.prefix);
  const taskUrls = await ensureTaskQueues(sqsClient(), config.prefix, "default");
  return { config: { ...config, eventsQueueUrl: eventsUrl }, eventsUrl, taskUrls };
}

/**
 * The tables of one test file, created on first use and shared by its suites (creating them is
 * the slow part).
 */
export function sharedTables(): () => Promise<TestAws["config"]["tables"]> {
  let aws: Promise<TestAws> | undefined;
  return async () => {
    aws ??= useTestAws();
    return (await aws).config.tables;
  };
}

/**
 * This test file's AWS on the shared emulators (started by global-setup.ts): the configuration
 * that points at them, one bundle of clients, and a private set of tables and queues (unique
 * prefix), so test files never see each other's data. Nothing here touches `process.env`.
 */
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
// The embedded backend's clients, for the run of `npm run test:embedded` (testAwsConfig).
import "../../lib/embedded/register.js";
import { type AwsClients, createAwsClients } from "../../lib/aws/clients.js";
import { type AwsConfig, configFromEnv, ENV, type ShoalConfig } from "../../lib/aws/config.js";
import {
  ensureEventsQueue,
  ensureTables,
  ensureTaskQueues,
} from "../../lib/standalone/provision.js";

export interface TestAws {
  config: ShoalConfig;
  /** The file's clients ({@link testClients}). */
  clients: AwsClients;
  eventsUrl: string;
  taskUrls: string[];
}

/**
 * The emulators' endpoints, with the dummy credentials they accept; on the embedded backend
 * (`npm run test:embedded`) also its directory, so that the clients open its files in-process.
 */
export function testAwsConfig(): AwsConfig {
  const embeddedDir = inject("embeddedDir");
  return {
    region: "us-east-1",
    endpoints: { dynamodb: inject("dynamodbEndpoint"), sqs: inject("sqsEndpoint") },
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    ...(embeddedDir ? { embeddedDir } : {}),
  };
}

let clients: AwsClients | undefined;

/** The clients of this test file, on the emulators (built on first use, one bundle per file). */
export function testClients(): AwsClients {
  clients ??= createAwsClients(testAwsConfig());
  return clients;
}

/**
 * A configuration on the emulators with a fresh prefix (defaults otherwise, logs quiet), and its
 * tables and queues created.
 * @param overrides settings that differ (e.g. `dataDir`).
 */
export async function useTestAws(overrides: Partial<ShoalConfig> = {}): Promise<TestAws> {
  const config: ShoalConfig = {
    ...configFromEnv({ [ENV.prefix]: `t${randomUUID().slice(0, 8)}`, [ENV.quiet]: "true" }),
    aws: testAwsConfig(),
    ...overrides,
  };
  const aws = testClients();
  await ensureTables(aws.dynamo, config.tables);
  const eventsUrl = await ensureEventsQueue(aws.sqs, config.prefix);
  const taskUrls = await ensureTaskQueues(aws.sqs, config.prefix, "default");
  return { config: { ...config, eventsQueueUrl: eventsUrl }, clients: aws, eventsUrl, taskUrls };
}

/**
 * The environment a Lambda function of this configuration gets (what the CDK stack and the
 * SDK's chain would set): for running the Lambda bundles, which read their environment.
 */
export function lambdaEnvironment(aws: TestAws): Record<string, string> {
  const { config } = aws;
  return {
    AWS_REGION: config.aws.region ?? "us-east-1",
    AWS_ACCESS_KEY_ID: config.aws.credentials?.accessKeyId ?? "",
    AWS_SECRET_ACCESS_KEY: config.aws.credentials?.secretAccessKey ?? "",
    AWS_ENDPOINT_URL_DYNAMODB: config.aws.endpoints.dynamodb ?? "",
    AWS_ENDPOINT_URL_SQS: config.aws.endpoints.sqs ?? "",
    [ENV.prefix]: config.prefix,
    [ENV.dataDir]: config.dataDir,
    [ENV.eventsQueueUrl]: aws.eventsUrl,
    [ENV.quiet]: String(config.quiet),
  };
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

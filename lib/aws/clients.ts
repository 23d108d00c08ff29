/**
 * The one place AWS SDK clients are built. Endpoints come from the SDK's own configuration
 * chain: AWS_REGION, AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> (AWS SDKs and Tools
 * reference guide, "Service-specific endpoints"); nothing here names an endpoint.
 * Every client counts its requests, so benchmarks can report AWS requests per task.
 */
import type { CloudFormationClient } from "@aws-sdk/client-cloudformation";
import { CloudWatchLogsClient } from "@aws-sdk/client-cloudwatch-logs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { SFNClient } from "@aws-sdk/client-sfn";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/** Requests sent, by `Service.Operation` (for example `DynamoDB.UpdateItem`). */
export const requestCounts = new Map<string, number>();

/** Sum of all counted requests, optionally of one service (`DynamoDB`, `SQS`). */
export function totalRequests(service?: string): number {
  let n = 0;
  for (const [key, v] of requestCounts) if (!service || key.startsWith(`${service}.`)) n += v;
  return n;
}

export function resetRequestCounts(): void {
  requestCounts.clear();
}

function count(service: string, commandName: string | undefined): void {
  const key = `${service}.${(commandName ?? "Unknown").replace(/Command$/, "")}`;
  requestCounts.set(key, (requestCounts.get(key) ?? 0) + 1);
}

const COUNTER = { step: "initialize", name: "shoalRequestCounter" } as const;

let dynamo: DynamoDBDocumentClient | undefined;
let sqs: SQSClient | undefined;

/** Keeps retries short: a local emulator answers fast, and callers retry at their own level. */
const common = { maxAttempts: 4 } as const;

/** The DynamoDB document client (one per process). */
export function dynamoClient(): DynamoDBDocumentClient {
  if (!dynamo) {
    const base = new DynamoDBClient({ ...common });
    base.middlewareStack.add(
      (next, ctx) => (args) => {
        count("DynamoDB", ctx.commandName);
        return next(args);
      },
      COUNTER,
    );
    dynamo = DynamoDBDocumentClient.from(base, {
      marshallOptions: { removeUndefinedValues: true },
    });
  }
  return dynamo;
}

/** The SQS client (one per process). */
export function sqsClient(): SQSClient {
  if (!sqs) {
    // Emulators hand out queue URLs whose host does not resolve (sqs.<region>.localhost); when an
    // endpoint is configured, requests go there rather than to the queue URL's host.
    const custom = Boolean(process.env.AWS_ENDPOINT_URL_SQS || process.env.AWS_ENDPOINT_URL);
    const client = new SQSClient({ ...common, useQueueUrlAsEndpoint: !custom });
    client.middlewareStack.add(
      (next, ctx) => (args) => {
        count("SQS", ctx.commandName);
        return next(args);
      },
      COUNTER,
    );
    sqs = client;
  }
  return sqs;
}

/** A counted client of another service, built once per process (Lambda, Step Functions, Logs). */
interface Stackable {
  middlewareStack: {
    add(
      mw: (
        next: (args: unknown) => unknown,
        ctx: { commandName?: string },
      ) => (args: unknown) => unknown,
      options: typeof COUNTER,
    ): void;
  };
}

function counted<C>(service: string, make: () => C): () => C {
  let client: C | undefined;
  const get = () => {
    if (!client) {
      const made = make();
      (made as unknown as Stackable).middlewareStack.add(
        (next, ctx) => (args) => {
          count(service, ctx.commandName);
          return next(args);
        },
        COUNTER,
      );
      client = made;
    }
    return client;
  };
  others.push(() => {
    (client as { destroy?: () => void } | undefined)?.destroy?.();
    client = undefined;
  });
  return get;
}

const others: Array<() => void> = [];

/** The Lambda client (LAMBDA tasks invoke functions with it). */
export const lambdaClient = counted("Lambda", () => new LambdaClient({ ...common }));
/** The Step Functions client (STEP_FUNCTIONS tasks). */
export const sfnClient = counted("SFN", () => new SFNClient({ ...common }));
/** The CloudWatch Logs client (task logs on AWS). */
export const logsClient = counted("CloudWatchLogs", () => new CloudWatchLogsClient({ ...common }));
/** The EventBridge client (state-change events on AWS). */
export const eventBridgeClient = counted("EventBridge", () => new EventBridgeClient({ ...common }));

/**
 * A CloudFormation client (the CLI's `config from-stack` reads stack outputs with it). Built
 * per call, not cached: the caller picks the region and profile (`--region`, `--profile`);
 * unset, the SDK's chain decides (AWS_REGION, then the profile's region). AWS_ENDPOINT_URL and
 * AWS_ENDPOINT_URL_CLOUDFORMATION apply as for every client (LocalStack). Destroy it after use.
 * Loaded on demand: the Lambda bundles, which import this file, never load the CloudFormation
 * client (about 50 ms of cold start).
 */
export async function cloudFormationClient(
  options: { region?: string; profile?: string } = {},
): Promise<CloudFormationClient> {
  const { CloudFormationClient } = await import("@aws-sdk/client-cloudformation");
  const client = new CloudFormationClient({
    ...common,
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
  });
  client.middlewareStack.add(
    (next, ctx) => (args) => {
      count("CloudFormation", ctx.commandName);
      return next(args);
    },
    COUNTER,
  );
  return client;
}

/** Drops cached clients (after the environment changed, in tests and standalone). */
export function resetClients(): void {
  dynamo?.destroy();
  sqs?.destroy();
  dynamo = undefined;
  sqs = undefined;
  for (const drop of others) drop();
}

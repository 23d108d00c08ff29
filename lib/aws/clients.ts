/**
 * The one place AWS SDK clients are built: {@link createAwsClients} returns a bundle of them for
 * one configuration ({@link AwsConfig}: region, endpoints, credentials). What the configuration
 * leaves out, the SDK's own chain decides (AWS_REGION, AWS_ENDPOINT_URL,
 * AWS_ENDPOINT_URL_<SERVICE>, the profile; AWS SDKs and Tools reference guide, "Service-specific
 * endpoints"); nothing here names an endpoint. Every client of a bundle counts its requests on
 * the bundle's {@link RequestCounter}, so benchmarks can report AWS requests per task.
 */
import type { CloudFormationClient } from "@aws-sdk/client-cloudformation";
import { CloudWatchLogsClient } from "@aws-sdk/client-cloudwatch-logs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { LambdaClient } from "@aws-sdk/client-lambda";
import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { SFNClient } from "@aws-sdk/client-sfn";
import type { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { SSMClient } from "@aws-sdk/client-ssm";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { AwsConfig, AwsService } from "./config.js";
import { embeddedClientsFactory } from "./embedded-registry.js";
import { addFaultInjection } from "./fault-injection.js";

/** Requests sent, by `Service.Operation` (for example `DynamoDB.UpdateItem`). */
export class RequestCounter {
  readonly counts = new Map<string, number>();

  /** Counts one request of `commandName` (`UpdateItemCommand`) to `service` (`DynamoDB`). */
  count(service: string, commandName: string | undefined): void {
    const key = `${service}.${(commandName ?? "Unknown").replace(/Command$/, "")}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** Sum of all counted requests, optionally of one service (`DynamoDB`, `SQS`). */
  total(service?: string): number {
    let n = 0;
    for (const [key, v] of this.counts) if (!service || key.startsWith(`${service}.`)) n += v;
    return n;
  }

  reset(): void {
    this.counts.clear();
  }
}

/** The clients of one configuration; the service clients are built on first use. */
export interface AwsClients {
  /** The DynamoDB document client (`undefined` attributes are left out of items). */
  readonly dynamo: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  /** LAMBDA tasks invoke functions with it. */
  readonly lambda: LambdaClient;
  /** STEP_FUNCTIONS tasks. */
  readonly sfn: SFNClient;
  /**
   * The Lambda client for calls to `region` (a function ARN's): the bundle's own `lambda` when
   * `region` is undefined or the bundle's region, else one built for that region with the same
   * options. It signs for that region, and sends to the same configured endpoint
   * (AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL: an emulator) when there is one, else to the SDK's
   * endpoint of that region, as the SDK does for a client of that region. At most
   * {@link REGION_CLIENTS} regions are kept, the least recently used dropped first.
   */
  lambdaIn(region: string | undefined): LambdaClient;
  /** The Step Functions client for calls to `region` (a state machine ARN's), as {@link lambdaIn}. */
  sfnIn(region: string | undefined): SFNClient;
  /** Task logs on AWS. */
  readonly logs: CloudWatchLogsClient;
  /** State-change events on AWS. */
  readonly eventBridge: EventBridgeClient;
  /**
   * The CloudFormation client (the CLI's `config from-stack` reads stack outputs with it).
   * Loaded on demand: the Lambda bundles, which import this file, never load it (about 50 ms of
   * cold start).
   */
  cloudFormation(): Promise<CloudFormationClient>;
  /**
   * Secrets Manager and SSM Parameter Store (workers read task secrets, lib/secrets/). Loaded
   * on demand like CloudFormation; their endpoints come from the SDK's own chain
   * (AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL_SSM, AWS_ENDPOINT_URL).
   */
  secretsManager(): Promise<SecretsManagerClient>;
  ssm(): Promise<SSMClient>;
  /** SNS (alert e-mails on AWS, lib/alerts/); loaded on demand like CloudFormation. */
  sns(): Promise<SNSClient>;
  /** What every client of the bundle sent. */
  readonly counter: RequestCounter;
  /** Destroys the clients built so far (their sockets); the bundle is not used afterwards. */
  destroy(): void;
}

/** Regions whose Lambda (and Step Functions) clients a bundle keeps besides its own. */
export const REGION_CLIENTS = 8;

/** Keeps retries short: a local emulator answers fast, and callers retry at their own level. */
const MAX_ATTEMPTS = 4;

const COUNTER = { step: "initialize", name: "shoalRequestCounter" } as const;

/** What a client's middleware stack takes (every SDK v3 client has one). */
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
  destroy(): void;
}

/**
 * A bundle of clients for `config`, counting on `counter` (a new one unless given: pass one to
 * add up several bundles, as a benchmark does).
 */
export function createAwsClients(
  config: AwsConfig,
  counter: RequestCounter = new RequestCounter(),
): AwsClients {
  const built: Stackable[] = [];
  /** Client options of `service`: the common ones, and its endpoint when one is configured. */
  const options = (service: AwsService) => {
    const endpoint = config.endpoints[service];
    return { ...chainOptions(), ...(endpoint ? { endpoint } : {}) };
  };
  /** The common options alone: the SDK's chain finds the endpoint (services without a setting here). */
  const chainOptions = () => ({
    maxAttempts: MAX_ATTEMPTS,
    ...(config.region ? { region: config.region } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
    ...(config.profile ? { profile: config.profile } : {}),
  });
  const counted = <C>(service: string, client: C): C => {
    const c = client as unknown as Stackable;
    c.middlewareStack.add(
      (next, ctx) => (args) => {
        counter.count(service, ctx.commandName);
        return next(args);
      },
      COUNTER,
    );
    if (config.faults) addFaultInjection(client, service, config.faults);
    built.push(c);
    return client;
  };
  const lazy = <C>(make: () => C): (() => C) => {
    let client: C | undefined;
    return () => {
      client ??= make();
      return client;
    };
  };
  // The embedded backend's clients serve the same commands in-process (lib/embedded/).
  const embedded = config.embeddedDir
    ? lazy(() =>
        embeddedClientsFactory()(config.embeddedDir as string, config.region ?? "us-east-1"),
      )
    : undefined;
  const dynamo = lazy(() =>
    embedded
      ? counted("DynamoDB", embedded().dynamo as DynamoDBDocumentClient)
      : DynamoDBDocumentClient.from(counted("DynamoDB", new DynamoDBClient(options("dynamodb"))), {
          marshallOptions: { removeUndefinedValues: true },
        }),
  );
  const sqs = lazy(() => {
    if (embedded) return counted("SQS", embedded().sqs as SQSClient);
    // Emulators hand out queue URLs whose host does not resolve (sqs.<region>.localhost); with
    // an endpoint configured, requests go there rather than to the queue URL's host.
    const custom = Boolean(config.endpoints.sqs);
    return counted("SQS", new SQSClient({ ...options("sqs"), useQueueUrlAsEndpoint: !custom }));
  });
  const lambda = lazy(() => counted("Lambda", new LambdaClient(options("lambda"))));
  const sfn = lazy(() => counted("SFN", new SFNClient(options("sfn"))));
  /**
   * Clients by region, for ARN-addressed calls to another region than the bundle's
   * (`own` serves that one). An evicted client is only forgotten, not destroyed: a task may
   * still be polling with it, and its idle keep-alive sockets neither hold the process open
   * (Node unrefs them) nor outlive the server's idle timeout.
   */
  const byRegion = <C>(own: () => C, make: (region: string) => C) => {
    const cache = new Map<string, C>();
    return (region: string | undefined): C => {
      if (region === undefined || region === config.region) return own();
      let client = cache.get(region);
      if (client === undefined) client = make(region);
      // Re-inserted: a Map iterates in insertion order, so the first key is the least recent.
      cache.delete(region);
      cache.set(region, client);
      if (cache.size > REGION_CLIENTS) {
        const oldest = cache.keys().next().value as string;
        const at = built.indexOf(cache.get(oldest) as unknown as Stackable);
        cache.delete(oldest);
        if (at >= 0) built.splice(at, 1);
      }
      return client;
    };
  };
  const regionOptions = (service: AwsService, region: string) => ({ ...options(service), region });
  const lambdaIn = byRegion(lambda, (region) =>
    counted("Lambda", new LambdaClient(regionOptions("lambda", region))),
  );
  const sfnIn = byRegion(sfn, (region) =>
    counted("SFN", new SFNClient(regionOptions("sfn", region))),
  );
  const logs = lazy(() => counted("CloudWatchLogs", new CloudWatchLogsClient(options("logs"))));
  const eventBridge = lazy(() =>
    counted("EventBridge", new EventBridgeClient(options("eventBridge"))),
  );
  let cloudFormation: Promise<CloudFormationClient> | undefined;
  let secretsManager: Promise<SecretsManagerClient> | undefined;
  let ssm: Promise<SSMClient> | undefined;
  let sns: Promise<SNSClient> | undefined;
  return {
    get dynamo() {
      return dynamo();
    },
    get sqs() {
      return sqs();
    },
    get lambda() {
      return lambda();
    },
    get sfn() {
      return sfn();
    },
    lambdaIn,
    sfnIn,
    get logs() {
      return logs();
    },
    get eventBridge() {
      return eventBridge();
    },
    cloudFormation() {
      cloudFormation ??= import("@aws-sdk/client-cloudformation").then(({ CloudFormationClient }) =>
        counted("CloudFormation", new CloudFormationClient(options("cloudFormation"))),
      );
      return cloudFormation;
    },
    secretsManager() {
      secretsManager ??= import("@aws-sdk/client-secrets-manager").then(
        ({ SecretsManagerClient }) =>
          counted("SecretsManager", new SecretsManagerClient(chainOptions())),
      );
      return secretsManager;
    },
    ssm() {
      ssm ??= import("@aws-sdk/client-ssm").then(({ SSMClient }) =>
        counted("SSM", new SSMClient(chainOptions())),
      );
      return ssm;
    },
    sns() {
      sns ??= import("@aws-sdk/client-sns").then(({ SNSClient }) =>
        counted("SNS", new SNSClient(chainOptions())),
      );
      return sns;
    },
    counter,
    destroy() {
      for (const c of built.splice(0)) c.destroy();
    },
  };
}

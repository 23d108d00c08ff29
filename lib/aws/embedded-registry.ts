/**
 * Where {@link createAwsClients} (clients.ts) finds the embedded backend's in-process clients
 * when a configuration names an embedded data directory (`SHOAL_EMBEDDED_DIR`). The backend lives
 * in lib/embedded/ and is registered by the processes that may use it (lib/embedded/register.ts,
 * imported by standalone, `shoal worker` and `shoal sweeper`), so that the Lambda bundles, which
 * import clients.ts, never load node:sqlite.
 */

/** The DynamoDB and SQS clients of one embedded data directory, built in this process. */
export interface EmbeddedClientPair {
  /** Serves @aws-sdk/lib-dynamodb's and @aws-sdk/client-dynamodb's commands. */
  dynamo: unknown;
  /** Serves @aws-sdk/client-sqs's commands. */
  sqs: unknown;
}

/** Builds the pair for a data directory (`dir`) and region. */
export type EmbeddedClientsFactory = (dir: string, region: string) => EmbeddedClientPair;

let factory: EmbeddedClientsFactory | undefined;

/** Makes the embedded backend available to {@link embeddedClientsFactory}'s callers. */
export function registerEmbeddedBackend(f: EmbeddedClientsFactory): void {
  factory = f;
}

/**
 * The registered factory.
 * @throws Error when none is registered: this process cannot open an embedded data directory.
 */
export function embeddedClientsFactory(): EmbeddedClientsFactory {
  if (!factory)
    throw new Error(
      "SHOAL_EMBEDDED_DIR is set, but this process cannot open the embedded backend (only shoal standalone, shoal worker and shoal sweeper can); unset it and use AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_SQS instead",
    );
  return factory;
}

/**
 * Global setup of `npm run test:dynamodb-local`: Amazon's DynamoDB Local in place of dynalite,
 * fauxqs for SQS as usual; tests reach them through `inject("dynamodbEndpoint")` /
 * `inject("sqsEndpoint")` exactly as with test/helpers/global-setup.ts.
 */
import type { TestProject } from "vitest/node";
import { startEmulators } from "../../lib/standalone/emulators.js";
import { startDynamoDbLocal } from "./dynamodb-local.js";

export default async function setup(project: TestProject) {
  const sqs = await startEmulators({ only: "sqs" });
  let ddb: Awaited<ReturnType<typeof startDynamoDbLocal>>;
  try {
    ddb = await startDynamoDbLocal();
  } catch (e) {
    await sqs.stop();
    throw e;
  }
  project.provide("dynamodbEndpoint", ddb.endpoint);
  project.provide("sqsEndpoint", sqs.sqsEndpoint);
  project.provide("embeddedDir", "");
  return async () => {
    await Promise.allSettled([ddb.stop(), sqs.stop()]);
  };
}

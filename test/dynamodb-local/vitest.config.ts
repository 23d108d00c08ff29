/**
 * Vitest configuration of `npm run test:dynamodb-local`: the store's conformance and integration
 * files run against Amazon's DynamoDB Local (a JVM, fetched on first use by
 * scripts/dynamodb-local.ts) instead of dynalite, for a second opinion on what DynamoDB accepts
 * and returns. SQS stays fauxqs. See docs/reliability.md, "A second opinion on DynamoDB".
 * Left out: test/e2e (`shoal standalone` starts its own dynalite, not the injected endpoint),
 * test/unit (no DynamoDB) and test/localstack (a deployed stack).
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The repository root, wherever the command runs from: include paths are relative to it.
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["test/integration/**/*.test.ts", "test/dynamodb-local/**/*.test.ts"],
    globalSetup: ["test/dynamodb-local/global-setup.ts"],
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});

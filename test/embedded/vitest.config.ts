/**
 * Vitest configuration of `npm run test:embedded`: the store and queue conformance and
 * integration files (test/integration) run against standalone's embedded backend
 * (lib/embedded/, DynamoDB and SQS on SQLite) instead of dynalite and fauxqs: their clients open
 * its files in-process, as standalone's processes do, while the setup process serves the same
 * files at the AWS-protocol endpoint for what a test sends there. The engines' own unit tests are
 * test/unit/embedded-*.test.ts; test/e2e runs on it as standalone's default backend.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["test/integration/**/*.test.ts"],
    globalSetup: ["test/embedded/global-setup.ts"],
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});

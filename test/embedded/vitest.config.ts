/**
 * Vitest configuration of `npm run test:embedded`: the store and queue conformance and
 * integration files (test/integration) run against standalone's embedded backend
 * (lib/embedded/, DynamoDB and SQS on SQLite) through its AWS-protocol endpoint, instead of
 * dynalite and fauxqs. The embedded clients themselves are tested by test/unit/embedded-*.test.ts
 * and, end to end, by test/e2e (standalone's default backend).
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

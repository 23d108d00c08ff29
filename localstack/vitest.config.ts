/**
 * Vitest configuration of `npm run test:localstack`: the end-to-end suite in test/localstack/
 * against the stack deployed on LocalStack. Unlike the root configuration it starts no
 * embedded emulators; its global setup only finds the deployment, and without one every test
 * is skipped and the command exits 0. Timeouts allow for Lambda cold starts and the sweeper's
 * one-minute schedule.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The repository root, wherever the command runs from: include paths are relative to it.
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["test/localstack/**/*.test.ts"],
    globalSetup: ["test/localstack/global-setup.ts"],
    pool: "forks",
    // One deployment: files (if more are added) run one after another, tests in order.
    fileParallelism: false,
    testTimeout: 5 * 60_000,
    hookTimeout: 2 * 60_000,
  },
});

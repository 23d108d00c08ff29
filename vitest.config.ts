import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The LocalStack suite needs a deployed stack: `npm run test:localstack` runs it.
    exclude: [...configDefaults.exclude, "test/localstack/**"],
    globalSetup: ["test/helpers/global-setup.ts"],
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: keep the heavy end-to-end files from starving each other.
    maxWorkers: 2,
  },
});

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
    // expect.poll's own default deadline is 1 s: a console page or a standalone answer can take
    // longer than that on a loaded 2-core machine (a CI failure of console-admin waiting for a
    // page's first render). Tests that need another deadline still set their own.
    expect: { poll: { timeout: 10_000 } },
  },
});

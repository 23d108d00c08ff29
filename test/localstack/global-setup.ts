/**
 * Global setup of `npm run test:localstack` (localstack/vitest.config.ts): finds the deployed
 * stack once, before any test file loads, and hands it to the tests as `inject("localstack")`.
 * When there is nothing to test against, it prints the one line saying why (from the main
 * process, so it is not wrapped in per-file console output) and the tests skip themselves.
 * It starts nothing: no embedded emulators, no LocalStack.
 */
import type { TestProject } from "vitest/node";
import { findTarget, type LocalStackTarget } from "./target.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The deployment under test (test/localstack/target.ts). */
    localstack: LocalStackTarget;
  }
}

/** Vitest global setup: probes LocalStack and provides the result as `localstack`. */
export default async function setup(project: TestProject): Promise<void> {
  const target = await findTarget(process.env);
  if (target.skip) console.log(target.skip);
  project.provide("localstack", target);
}

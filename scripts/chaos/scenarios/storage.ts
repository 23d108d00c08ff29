/**
 * Scenario 4: storage faults. Standalone (and its built-in worker) run with SHOAL_TEST_FAULTS:
 * latency and throttling / 5xx errors on a fraction of DynamoDB and SQS calls, injected inside
 * the SDK's retries (lib/aws/fault-injection.ts). The faults stay on while the runs drain: they
 * are what a throttled table looks like, and every run must still finish, once.
 *
 * A full disk is scenario `disk-full` (scenarios/disk-full.ts).
 */

import { setTimeout as sleep } from "node:timers/promises";
import { Submitter } from "../load.js";
import { freePort, startStandalone } from "../processes.js";
import { finishRuns, type Scenario, setUpLoad, tearDown } from "../scenario.js";

/** The faults injected (the format of lib/aws/fault-injection.ts). */
export const STORAGE_FAULTS =
  "dynamodb:error=0.05,latency=0.1:20-200ms;sqs:error=0.05,latency=0.1:20-200ms";

export const storage: Scenario = async (ctx) => {
  const port = await freePort();
  const sa = await startStandalone({
    dataDir: ctx.dir,
    port,
    workers: 8,
    env: { SHOAL_TEST_FAULTS: STORAGE_FAULTS },
  });
  const base = () => sa.url;
  const { names, dags, effectsFile } = await setUpLoad(ctx, sa.url);
  const submitter = Submitter.start(ctx, base, names);
  await sleep(ctx.faultMs);
  const done = await finishRuns(ctx, base, submitter, dags, effectsFile);
  const orphans = await tearDown(ctx.dir);
  return {
    name: ctx.name,
    figures: done.figures,
    load: done.load,
    faults: `SHOAL_TEST_FAULTS=${STORAGE_FAULTS} (throttling, 500, 503)`,
    checks: [...done.checks, orphans],
    notes: [`double executions: ${done.figures.doubleExecutions}`],
  };
};

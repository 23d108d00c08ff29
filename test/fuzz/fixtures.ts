/**
 * What the fuzzed requests name: a workflow (`base`, extract → load), one run of it, an OFFLINE
 * schedule, a backfill, a trigger and a task group, created through the API before the cases
 * run; and the pools of names and ids the cases draw their path parameters from (the fixtures'
 * own, names the valid cases may create, and names of nothing).
 */
import type { FuzzServer } from "./harness.js";

/** The ids of the fixtures. */
export interface Fixtures {
  instanceId: string;
  scheduleId: string;
  backfillId: string;
  triggerId: string;
}

/** Workflow names valid cases may create, update or delete (writes stay within these). */
export const SCRATCH_WORKFLOWS = ["fz-a", "fz-b", "fz-c"] as const;
/** Task group names valid cases may create, update or delete. */
export const SCRATCH_GROUPS = ["fz-g1", "fz-g2"] as const;

/** The definition of `base` (and of the scratch workflows valid cases create). */
export const BASE_DEFINITION = {
  description: "extract then load",
  tasks: [
    { code: "extract", type: "SHELL", command: "echo extract" },
    { code: "load", type: "SHELL", upstream: ["extract"], command: "echo load" },
  ],
};

/** A valid schedule body (OFFLINE, so the fuzz run never fires it). */
export const SCHEDULE_BODY = { workflow: "base", cron: "0 0 * * *", state: "OFFLINE" };
/** A valid backfill body (a dry run: lists the two nominal times, starts nothing). */
export const BACKFILL_BODY = {
  from: "2024-01-01T00:00:00Z",
  to: "2024-01-02T00:00:00Z",
  cron: "0 0 * * *",
  dryRun: true,
};

async function call(server: FuzzServer, method: string, path: string, body?: unknown) {
  const a = await server.send({
    method,
    path,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
  });
  if (a.status >= 300) throw new Error(`fixture ${method} ${path}: ${a.status} ${a.text}`);
  return a.text ? JSON.parse(a.text) : undefined;
}

/** Creates the fixtures through the API. @throws when one is refused. */
export async function createFixtures(server: FuzzServer): Promise<Fixtures> {
  await call(server, "PUT", "/v1/workflows/base", BASE_DEFINITION);
  const run = await call(server, "POST", "/v1/workflows/base/runs", {});
  const schedule = await call(server, "POST", "/v1/schedules", SCHEDULE_BODY);
  const backfill = await call(server, "POST", "/v1/workflows/base/backfill", {
    ...BACKFILL_BODY,
    dryRun: false,
  });
  const trigger = await call(server, "POST", "/v1/triggers", {
    workflow: "base",
    eventPattern: { source: ["fz.never"] },
  });
  await call(server, "PUT", "/v1/task-groups/fz-group", { capacity: 2 });
  return {
    instanceId: run.instanceId,
    scheduleId: schedule.id,
    backfillId: backfill.id ?? backfill.backfillId,
    triggerId: trigger.id,
  };
}

/**
 * Creating the schedules scenario's schedules: one-time (`at`) schedules written straight to the
 * store as POST /v1/schedules would write them, with bounded concurrency, and the API event that
 * puts their workflow.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import pLimit from "p-limit";
import { nextFireTimes } from "../lib/core/schedule-time.js";
import type { Runtime } from "../lib/runtime/runtime.js";
import { httpApiEvent } from "../lib/standalone/lambda-events.js";
import { type ScheduleRecord, shardOf, timingOf } from "../lib/store/schedules.js";
import { CREATE_CONCURRENCY, WORKFLOW } from "./schedules-config.js";

/** The event API Gateway would hand the API handler. */
export function apiEvent(method: string, path: string, body: unknown): APIGatewayProxyEventV2 {
  return httpApiEvent({
    method,
    path,
    headers: { "content-type": "application/json", "user-agent": "bench" },
    body: JSON.stringify(body),
    requestId: randomUUID(),
    timeEpoch: Date.now(),
  });
}

/** A schedule as POST /v1/schedules writes it with the API's defaults (lib/api/schedules.ts). */
function scheduleRecord(at: number, now: number): ScheduleRecord {
  const id = randomUUID();
  const rec: ScheduleRecord = {
    id,
    workflow: WORKFLOW,
    at,
    timezone: "UTC",
    params: {},
    misfirePolicy: "FIRE_ONCE",
    misfireThresholdSeconds: 60,
    maxCatchup: 100,
    overlapPolicy: "PARALLEL",
    state: "ONLINE",
    shard: shardOf(id),
    createdAt: now,
    updatedAt: now,
    rev: 1,
  };
  const [next] = nextFireTimes(timingOf(rec), now, 1);
  if (next !== undefined) rec.nextFireTime = next;
  return rec;
}

/** Writes `n` schedules due at `at` with bounded concurrency, adding them to `created`. @returns ms taken. */
export async function createSchedules(
  rt: Runtime,
  n: number,
  at: number,
  created: Array<{ id: string; shard: string }>,
  progress?: (done: number) => void,
): Promise<number> {
  const t = performance.now();
  let done = 0;
  await pLimit(CREATE_CONCURRENCY).map(
    Array.from({ length: n }, (_, i) => i),
    async () => {
      const rec = scheduleRecord(at, Date.now());
      if (!(await rt.scheduling.schedules.putSchedule(rec))) throw new Error("schedule id clash");
      created.push({ id: rec.id, shard: rec.shard });
      if (++done % 5_000 === 0) progress?.(done);
    },
  );
  return performance.now() - t;
}

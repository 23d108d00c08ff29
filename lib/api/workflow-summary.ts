/**
 * `GET /v1/workflows?include=summary` (docs/api.md): each workflow of the page also carries the
 * earliest next fire of its ONLINE schedules and its newest runs, for the console's workflow list
 * without one request per row. Bounded: at most {@link MAX_LIMIT_WITH_SUMMARY} workflows a page,
 * two indexed queries per workflow (instances by workflow, schedules by workflow), at most
 * {@link SUMMARY_CONCURRENCY} at a time.
 */
import pLimit from "p-limit";
import { validationError } from "../core/errors.js";
import type { WorkflowHead } from "../store/records.js";
import type { ApiDeps } from "./deps.js";
import { iso, workflowSummary } from "./present.js";

/** Largest `limit` with `include=summary`. */
export const MAX_LIMIT_WITH_SUMMARY = 50;
/** How many of its newest runs each workflow carries in `lastRuns`. */
export const LAST_RUNS = 5;
/** Schedules read per workflow for `nextFireAt` (one page of the by-workflow index). */
export const SUMMARY_SCHEDULES = 100;
/** Workflows summarised at once (each is two DynamoDB queries). */
const SUMMARY_CONCURRENCY = 8;

/** `include`: only `summary` is known. @throws RequestError ValidationError naming `include`. */
export function parseWorkflowInclude(value: string | undefined): boolean {
  if (value === undefined || value === "") return false;
  if (value !== "summary") {
    throw validationError([{ path: "include", message: "must be 'summary'" }]);
  }
  return true;
}

/**
 * The list items with `nextFireAt`/`nextFireTimezone` (the earliest `nextFireTime` among the
 * workflow's ONLINE schedules, and that schedule's zone; absent when none will fire) and
 * `lastRuns` (its newest {@link LAST_RUNS} instances, newest first).
 */
export async function summariseWorkflows(deps: ApiDeps, heads: readonly WorkflowHead[]) {
  const limit = pLimit(SUMMARY_CONCURRENCY);
  return Promise.all(
    heads.map((h) =>
      limit(async () => {
        const [runs, schedules] = await Promise.all([
          deps.store.listInstances({ workflow: h.name, limit: LAST_RUNS }),
          deps.scheduling.schedules.listSchedules({
            workflow: h.name,
            limit: SUMMARY_SCHEDULES,
          }),
        ]);
        let next: { at: number; zone: string } | undefined;
        for (const s of schedules.items) {
          if (s.state !== "ONLINE" || s.nextFireTime === undefined) continue;
          if (!next || s.nextFireTime < next.at)
            next = { at: s.nextFireTime, zone: s.timezone ?? "UTC" };
        }
        return {
          ...workflowSummary(h),
          ...(next ? { nextFireAt: iso(next.at), nextFireTimezone: next.zone } : {}),
          lastRuns: runs.items.slice(0, LAST_RUNS).map((r) => ({
            instanceId: r.instanceId,
            state: r.state,
            createdAt: new Date(r.createdAt).toISOString(),
          })),
        };
      }),
    ),
  );
}

/** Fetching and tabulating instance lists: shared by `shoal instances` and its `--watch` view. */
import type { InstanceSummary, Page } from "./api-types.js";
import { durationBetween, formatTime } from "./format.js";
import type { ApiClient } from "./http.js";

/** The API's largest page; bigger limits are served by following `nextToken`. */
const MAX_PAGE = 200;

/** Which instances to list (`--workflow`, `--state`, `--type`, `--limit`). */
export interface InstanceFilter {
  workflow?: string;
  state?: string;
  /** The API's `runType` (lib/core/run-type.ts). */
  runType?: string;
  limit: number;
}

/** Instances matching `filter`, newest first, and the token for more when the limit cut them off. */
export async function fetchInstances(
  api: ApiClient,
  filter: InstanceFilter,
  signal?: AbortSignal,
): Promise<{ items: InstanceSummary[]; nextToken?: string }> {
  const items: InstanceSummary[] = [];
  let nextToken: string | undefined;
  do {
    const page = await api.get<Page<InstanceSummary>>(
      "/v1/instances",
      {
        workflow: filter.workflow,
        state: filter.state,
        runType: filter.runType,
        limit: Math.min(MAX_PAGE, filter.limit - items.length),
        nextToken,
      },
      signal,
    );
    items.push(...(page.items ?? []));
    nextToken = page.nextToken;
  } while (nextToken && items.length < filter.limit);
  return nextToken ? { items, nextToken } : { items };
}

/**
 * Column headers of the instance table. TYPE is the API's `runType` (what started the instance);
 * SCHEDULE TIME the nominal time of a scheduled, backfilled or sub-workflow run.
 */
export const INSTANCE_HEADERS = [
  "INSTANCE",
  "WORKFLOW",
  "STATE",
  "TYPE",
  "SCHEDULE TIME",
  "CREATED",
  "DURATION",
];

/** One row of the instance table, matching {@link INSTANCE_HEADERS}; `-` for what is absent. */
export function instanceCells(i: InstanceSummary, now: number = Date.now()): string[] {
  return [
    i.instanceId,
    `${i.workflow}:${i.version}`,
    i.state,
    i.runType ?? "-",
    formatTime(i.scheduleTime),
    formatTime(i.createdAt),
    durationBetween(i.startedAt, i.endedAt, now),
  ];
}

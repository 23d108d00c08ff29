/**
 * DEPENDENT checks: whether the instances a DEPENDENT task depends on (other workflows' runs in
 * its date periods) are there and how they ended. The dispatcher decides with them
 * (lib/engine/logic-tasks.ts); `shoal explain` reads them to say what a task waits for.
 */
import {
  type DependentCandidate,
  type DependentItem,
  type DependResult,
  dateIntervals,
  evaluateDependence,
  itemResult,
} from "../core/dependent.js";
import type { DependentTaskDefinition } from "../core/model.js";
import type { EngineDeps } from "./engine-deps.js";

/** Instances of one workflow read for one DEPENDENT item, at most. */
const DEPENDENT_SCAN_LIMIT = 2_000;

/**
 * Evaluates a dependence against the instances in the store, relative to `baseMs` in the IANA
 * zone `zone` (the depending instance's: its date periods are days of that zone).
 */
export async function checkDependence(
  deps: Pick<EngineDeps, "store">,
  task: DependentTaskDefinition,
  baseMs: number,
  zone: string,
): Promise<DependResult> {
  const results = new Map<DependentItem, DependResult>();
  for (const group of task.dependence.groups) {
    for (const item of group.items) results.set(item, await checkItem(deps, item, baseMs, zone));
  }
  return evaluateDependence(task.dependence, (item) => results.get(item) ?? "WAITING");
}

/**
 * The result of one dependent item at base time `baseMs` (epoch ms), from the instances in the
 * store; also read by `shoal explain` (lib/api/explain.ts) to say which items a task waits for.
 */
export async function checkItem(
  deps: Pick<EngineDeps, "store">,
  item: DependentItem,
  baseMs: number,
  /** IANA zone whose days and hours the item's date value names; default UTC. */
  zone?: string,
): Promise<DependResult> {
  const intervals = dateIntervals(item.dateValue, baseMs, zone);
  const from = Math.min(...intervals.map((i) => i.startMs));
  const candidates: DependentCandidate[] = [];
  let nextToken: string | undefined;
  let scanned = 0;
  // Newest first; an instance is created after its business time, so older pages can stop.
  do {
    const page = await deps.store.listInstances({
      workflow: item.workflow,
      limit: 200,
      ...(nextToken ? { nextToken } : {}),
    });
    for (const s of page.items) {
      scanned++;
      const business = s.scheduleTime ?? s.startedAt ?? s.createdAt;
      if (!intervals.some((i) => business >= i.startMs && business < i.endMs)) continue;
      let taskState: string | undefined;
      if (item.task) {
        const attempts = await deps.store.listAttempts(s.instanceId, item.task);
        taskState = attempts[attempts.length - 1]?.state;
      }
      candidates.push({
        state: s.state,
        createdAt: s.createdAt,
        ...(s.scheduleTime !== undefined ? { scheduleTime: s.scheduleTime } : {}),
        ...(s.startedAt !== undefined ? { startedAt: s.startedAt } : {}),
        ...(taskState !== undefined ? { taskState } : {}),
      });
    }
    const oldest = page.items[page.items.length - 1];
    if (!oldest || oldest.createdAt < from - 3_600_000) break;
    nextToken = page.nextToken;
  } while (nextToken && scanned < DEPENDENT_SCAN_LIMIT);
  return itemResult(item, intervals, candidates);
}

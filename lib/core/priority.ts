/**
 * Dispatch order, as DolphinScheduler's TaskPriorityQueue sorts it: workflow instance priority,
 * then the older instance, then task priority, then task code.
 */
import { PRIORITIES, type Priority } from "./model.js";

/** 0 for HIGHEST … 4 for LOWEST. */
export function priorityRank(p: Priority): number {
  return PRIORITIES.indexOf(p);
}

/** What the dispatcher needs to order one ready task. */
export interface DispatchKey {
  instancePriority: Priority;
  /** Instance creation time, epoch ms. */
  instanceCreatedAt: number;
  taskPriority: Priority;
  code: string;
}

/** Comparator: negative when `a` goes first. */
export function compareDispatch(a: DispatchKey, b: DispatchKey): number {
  return (
    priorityRank(a.instancePriority) - priorityRank(b.instancePriority) ||
    a.instanceCreatedAt - b.instanceCreatedAt ||
    priorityRank(a.taskPriority) - priorityRank(b.taskPriority) ||
    (a.code < b.code ? -1 : a.code > b.code ? 1 : 0)
  );
}

/**
 * Bounds of a task group's settings, shared by the API's validation, the store and the CLI's
 * help text. A task group limits how many tasks of its members run at once (DolphinScheduler's
 * task groups, `t_ds_task_group`).
 */

/** Capacity bounds of a group (slots). */
export const TASK_GROUP_CAPACITY = { min: 1, max: 1000 } as const;
/** Task-group priority bounds; higher is served first (DolphinScheduler's taskGroupPriority). */
export const TASK_GROUP_PRIORITY = { min: 0, max: 100 } as const;

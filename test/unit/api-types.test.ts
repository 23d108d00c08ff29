/**
 * The answers the handlers build against the types generated from the OpenAPI document
 * (lib/cli/api-types.generated.ts): the same fields, of compatible types. Checked by the type
 * checker (`npm run typecheck`); the one runtime test only keeps vitest from calling the file empty.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { backfillView } from "../../lib/api/backfills.js";
import type { DecisionLogPage } from "../../lib/api/decision-log.js";
import type {
  instanceDetail,
  instanceSummary,
  taskInstance,
  workflowSummary,
} from "../../lib/api/present.js";
import type { scheduleView, writtenView } from "../../lib/api/schedules.js";
import type { TaskGroupView } from "../../lib/api/task-groups.js";
import type { TriggerOutcome } from "../../lib/api/trigger-delivery.js";
import type { triggerView } from "../../lib/api/triggers.js";
import type * as api from "../../lib/cli/api-types.generated.js";
import type { Explanation } from "../../lib/core/explain-facts.js";
import type { Rendered, TaskRendering } from "../../lib/tasks/render-task.js";

/**
 * A view's fields with `undefined` taken out: the API omits an undefined field from its JSON,
 * and present.ts `iso` (typed `string | undefined`) gives a string for every time it is given.
 */
type Sent<T> = { [K in keyof T]-?: Defined<T[K]> };
type Defined<V> =
  Exclude<V, undefined> extends Array<infer E>
    ? Array<Exclude<E, undefined>>
    : Exclude<V, undefined>;
/** Every field of `T`, required or not. */
type Fields<T> = keyof Sent<T>;
type View<F extends (...args: never[]) => unknown> = ReturnType<F>;

describe("handlers' answers and the generated API types", () => {
  it("have the same fields, of compatible types", () => {
    expectTypeOf<Fields<View<typeof workflowSummary>>>().toEqualTypeOf<
      Fields<api.WorkflowSummary>
    >();
    expectTypeOf<Sent<View<typeof workflowSummary>>>().toExtend<Sent<api.WorkflowSummary>>();
    expectTypeOf<Fields<View<typeof instanceSummary>>>().toEqualTypeOf<
      Fields<api.InstanceSummary>
    >();
    expectTypeOf<Sent<View<typeof instanceSummary>>>().toExtend<Sent<api.InstanceSummary>>();
    expectTypeOf<Fields<View<typeof instanceDetail>>>().toEqualTypeOf<Fields<api.Instance>>();
    expectTypeOf<Fields<View<typeof taskInstance>>>().toEqualTypeOf<Fields<api.TaskInstance>>();
    expectTypeOf<Sent<View<typeof taskInstance>>>().toExtend<Sent<api.TaskInstance>>();
    expectTypeOf<Fields<View<typeof scheduleView>>>().toEqualTypeOf<Fields<api.Schedule>>();
    expectTypeOf<Sent<View<typeof scheduleView>>>().toExtend<Sent<api.Schedule>>();
    expectTypeOf<Fields<View<typeof writtenView>>>().toEqualTypeOf<Fields<api.ScheduleWritten>>();
    expectTypeOf<Sent<View<typeof writtenView>>>().toExtend<Sent<api.ScheduleWritten>>();
    expectTypeOf<Fields<View<typeof backfillView>>>().toEqualTypeOf<Fields<api.Backfill>>();
    expectTypeOf<Sent<View<typeof backfillView>>>().toExtend<Sent<api.Backfill>>();
    expectTypeOf<Fields<View<typeof triggerView>>>().toEqualTypeOf<Fields<api.Trigger>>();
    expectTypeOf<Fields<TaskGroupView>>().toEqualTypeOf<Fields<api.TaskGroup>>();
    expectTypeOf<Sent<TaskGroupView>>().toExtend<Sent<api.TaskGroup>>();
    expectTypeOf<Fields<TriggerOutcome>>().toEqualTypeOf<Fields<api.TriggerOutcome>>();
    expectTypeOf<Sent<TriggerOutcome>>().toExtend<Sent<api.TriggerOutcome>>();
    expectTypeOf<Fields<DecisionLogPage>>().toEqualTypeOf<Fields<api.LogPage>>();
    expectTypeOf<Sent<DecisionLogPage>>().toExtend<Sent<api.LogPage>>();
    expectTypeOf<Fields<Explanation>>().toEqualTypeOf<Fields<api.Explanation>>();
    expectTypeOf<Sent<Explanation>>().toExtend<Sent<api.Explanation>>();
    // Each rendered form is one of the document's, and each of the document's is one of them.
    expectTypeOf<Rendered>().toExtend<api.RenderedTask>();
    expectTypeOf<api.RenderedTask>().toExtend<Rendered>();
    // The render answer is the task's rendering with where it stands (render.ts `answer`).
    expectTypeOf<Exclude<Fields<TaskRendering>, Fields<api.TaskRendering>>>().toBeNever();
    expectTypeOf<Sent<TaskRendering>>().toExtend<
      Pick<Sent<api.TaskRendering>, Fields<TaskRendering>>
    >();
  });
});

/**
 * Why a task is not running, in words: the API's explanation
 * (`GET /v1/instances/{id}/tasks/{code}/explain`: waiting for upstream tasks, a full task group,
 * no worker, a retry due later, skipped by a branch…), refreshed every 2 s while it waits. The
 * sentence already names what it rests on (the group's slots, the upstream tasks, the worker
 * group), so the facts are not repeated.
 */
import { useQuery } from "@tanstack/react-query";
import type { Explanation } from "../../../../lib/cli/api-types.generated";
import { api } from "../../api";
import { ErrorNote } from "../ErrorNote";

export function ExplainNote(props: { base: string; waiting: boolean }) {
  const explain = useQuery({
    queryKey: ["explain", props.base],
    queryFn: () => api<Explanation>(`${props.base}/explain`),
    refetchInterval: props.waiting ? 2_000 : false,
  });
  const x = explain.data;
  if (explain.error) return <ErrorNote error={explain.error} />;
  if (!x) return null;
  return (
    <section className="explain" aria-label="why it is not running" aria-live="polite">
      <p>
        <strong>Why: </strong>
        {x.message}
        {x.message.endsWith(".") ? "" : "."}{" "}
        <span className="mono reason" title="the reason's code (docs/workflows.md §11)">
          {x.reason}
        </span>
      </p>
    </section>
  );
}

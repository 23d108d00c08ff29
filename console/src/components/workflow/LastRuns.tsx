/** A workflow's newest runs (from the list's `include=summary`), newest first, as state dots. */
import { RunDots } from "../RunDots";
import type { WorkflowListItem } from "./types";

export function LastRuns({ runs }: { runs: NonNullable<WorkflowListItem["lastRuns"]> }) {
  if (runs.length === 0) return <span className="empty">no runs</span>;
  return (
    <RunDots
      ariaLabel="last runs"
      runs={runs.map((r) => ({
        instanceId: r.instanceId,
        state: r.state,
        label: `${r.state} instance ${r.instanceId.slice(0, 8)} created ${r.createdAt}`,
      }))}
    />
  );
}

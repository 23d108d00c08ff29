/**
 * A workflow's newest runs as small state dots (Airflow's recent-runs column), newest first:
 * each dot has its state's colour and icon, the state as its title and accessible name, and
 * links to its instance.
 */
import { Link } from "react-router";
import { stateLook } from "../StateBadge";
import type { WorkflowListItem } from "./types";

export function LastRuns({ runs }: { runs: NonNullable<WorkflowListItem["lastRuns"]> }) {
  if (runs.length === 0) return <span className="empty">no runs</span>;
  return (
    <span className="last-runs">
      {runs.map((r) => {
        const { icon, tone } = stateLook(r.state);
        const label = `${r.state} instance ${r.instanceId.slice(0, 8)} created ${r.createdAt}`;
        return (
          <Link
            key={r.instanceId}
            to={`/instances/${r.instanceId}`}
            className={`run-dot state-${tone}`}
            title={label}
            aria-label={label}
          >
            <span aria-hidden="true">{icon}</span>
          </Link>
        );
      })}
    </span>
  );
}

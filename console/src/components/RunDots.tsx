/**
 * Runs as small state dots (Airflow's recent-runs column), in the order given: each dot has its
 * state's colour and icon, a label (the state word first) as its title and accessible name, and
 * links to its instance. Used by the workflows list and the triggers page.
 */
import { Link } from "react-router";
import { type AnyState, stateLook } from "./StateBadge";

/** One dot: the instance it opens, its state, and the words a hover or screen reader gives. */
export interface RunDot {
  instanceId: string;
  state: AnyState;
  label: string;
}

export function RunDots(props: { runs: readonly RunDot[]; ariaLabel: string }) {
  return (
    <ul className="last-runs" aria-label={props.ariaLabel}>
      {props.runs.map((r) => {
        const { icon, tone } = stateLook(r.state);
        return (
          <li key={r.instanceId}>
            <Link
              to={`/instances/${r.instanceId}`}
              className={`run-dot tone-bg-${tone}`}
              title={r.label}
              aria-label={r.label}
            >
              <span aria-hidden="true">{icon}</span>
            </Link>
          </li>
        );
      })}
    </ul>
  );
}

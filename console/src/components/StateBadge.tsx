/**
 * A state as colour, icon and word together: the icon and the word carry the meaning for
 * colour-blind users and screen readers; the colours follow the Okabe–Ito palette.
 */
import type { Instance, TaskInstance } from "../api";

/** Every instance and task state the API answers. */
export type AnyState = Instance["state"] | TaskInstance["state"] | "NOT_STARTED";

const LOOK: Record<AnyState, { icon: string; tone: string }> = {
  SUCCESS: { icon: "✓", tone: "success" },
  FORCED_SUCCESS: { icon: "✓", tone: "success" },
  FAILURE: { icon: "✕", tone: "failure" },
  KILLED: { icon: "⊘", tone: "failure" },
  RUNNING: { icon: "▶", tone: "running" },
  DISPATCHED: { icon: "⇢", tone: "queued" },
  SUBMITTED: { icon: "…", tone: "queued" },
  NEED_FAULT_TOLERANCE: { icon: "↻", tone: "retry" },
  PAUSING: { icon: "‖", tone: "paused" },
  PAUSED: { icon: "‖", tone: "paused" },
  STOPPING: { icon: "■", tone: "stopped" },
  STOPPED: { icon: "■", tone: "stopped" },
  SKIPPED: { icon: "↷", tone: "skipped" },
  NOT_STARTED: { icon: "○", tone: "none" },
};

/** The icon and colour class of a state. */
export function stateLook(state: AnyState): { icon: string; tone: string } {
  return LOOK[state] ?? { icon: "?", tone: "none" };
}

/** A state badge: icon and word on the state's colour. */
export function StateBadge({ state }: { state: AnyState }) {
  const { icon, tone } = stateLook(state);
  return (
    <span className={`state state-${tone}`} title={state}>
      <span aria-hidden="true">{icon}</span> {state.replaceAll("_", " ")}
    </span>
  );
}

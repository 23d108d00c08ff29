/** A backfill's state as colour, icon and word (the instance badge's look; CANCELLED is its own). */
import type { Backfill } from "../../../../lib/cli/api-types.generated";

const LOOK: Record<Backfill["state"], { icon: string; tone: string }> = {
  RUNNING: { icon: "▶", tone: "running" },
  PAUSED: { icon: "‖", tone: "paused" },
  CANCELLED: { icon: "■", tone: "stopped" },
  SUCCESS: { icon: "✓", tone: "success" },
  FAILURE: { icon: "✕", tone: "failure" },
};

/** The badge of a backfill state. */
export function BackfillStateBadge({ state }: { state: Backfill["state"] }) {
  const look = LOOK[state] ?? { icon: "?", tone: "none" };
  return (
    <span className={`state state-${look.tone}`} title={state}>
      <span aria-hidden="true">{look.icon}</span> {state}
    </span>
  );
}

/** Whether a backfill can still change by itself (a paused one still counts its running runs). */
export function backfillLive(b: Backfill): boolean {
  return b.state === "RUNNING" || b.running > 0;
}

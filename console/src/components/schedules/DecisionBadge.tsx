/**
 * A fire's decision as colour, icon and word together (the state badge's look), so that it reads
 * without colour: FIRED ✓, SKIPPED MISFIRE ⤼, DISCARDED OVERLAP ⊘, QUEUED SERIAL ….
 */
import type { Fire } from "../../../../lib/cli/api-types.generated";

const LOOK: Record<Fire["decision"], { icon: string; tone: string; why: string }> = {
  FIRED: { icon: "✓", tone: "success", why: "a run was started" },
  SKIPPED_MISFIRE: {
    icon: "⤼",
    tone: "failure",
    why: "reached too late; the misfire policy skipped it",
  },
  DISCARDED_OVERLAP: {
    icon: "⊘",
    tone: "stopped",
    why: "the schedule's previous run was unfinished, or a newer time replaced it in the queue",
  },
  QUEUED_SERIAL: { icon: "…", tone: "queued", why: "waits for the schedule's running run" },
};

/** The decision's badge; its title says what the decision means. */
export function DecisionBadge({ decision }: { decision: Fire["decision"] }) {
  const look = LOOK[decision] ?? { icon: "?", tone: "none", why: decision };
  return (
    <span className={`state state-${look.tone}`} title={look.why}>
      <span aria-hidden="true">{look.icon}</span> {decision.replaceAll("_", " ")}
    </span>
  );
}

/** A workflow's last runs started by triggers, as coloured dots linking to each instance. */
import { useQuery } from "@tanstack/react-query";
import { api, type InstanceSummary, type Page, withQuery } from "../../api";
import { ErrorNote } from "../ErrorNote";
import { formatInstant } from "../format";
import { RunDots } from "../RunDots";

const FINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);

/**
 * The newest `limit` instances of `workflow` with run type TRIGGER, newest left; each dot has the
 * state's colour and icon, and the state word as its title and accessible name. Live every 3 s
 * while one of them runs, every 15 s otherwise (a new event may start one).
 */
export function LastRuns(props: { workflow: string; limit?: number }) {
  const path = withQuery("/v1/instances", {
    workflow: props.workflow,
    runType: "TRIGGER",
    limit: String(props.limit ?? 5),
  });
  const runs = useQuery({
    queryKey: ["trigger-runs", props.workflow, props.limit ?? 5],
    queryFn: () => api<Page<InstanceSummary>>(path),
    refetchInterval: (q) => (q.state.data?.items.some((i) => !FINAL.has(i.state)) ? 3_000 : 15_000),
  });
  if (runs.error) return <ErrorNote error={runs.error} />;
  if (!runs.data) return <span aria-busy="true">…</span>;
  if (runs.data.items.length === 0) return <span className="note">none yet</span>;
  return (
    <RunDots
      ariaLabel={`last triggered runs of ${props.workflow}`}
      runs={runs.data.items.map((i) => ({
        instanceId: i.instanceId,
        state: i.state,
        label: `${i.state} (${formatInstant(i.startedAt ?? i.createdAt)})`,
      }))}
    />
  );
}

/**
 * A workflow's newest instances (a short table: state, version, run type, start, duration),
 * each linking to its page, and a link to all of them in the instance list. Refreshed every
 * 5 s while one of them is not over, else every 30 s.
 */
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { api, type Page } from "../../api";
import { ErrorNote } from "../ErrorNote";
import { formatInstant, formatSpan } from "../format";
import { StateBadge } from "../StateBadge";
import type { InstanceSummary } from "./types";

const FINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);
const SHOWN = 10;

export function RecentInstances({ name }: { name: string }) {
  const list = useQuery({
    queryKey: ["instances", "recent", name],
    queryFn: () =>
      api<Page<InstanceSummary>>(
        `/v1/instances?workflow=${encodeURIComponent(name)}&limit=${SHOWN}`,
      ),
    refetchInterval: (q) => (q.state.data?.items.some((i) => !FINAL.has(i.state)) ? 5_000 : 30_000),
  });
  const now = Date.now();
  return (
    <section className="recent-instances">
      <h2>
        Recent instances{" "}
        <Link className="small" to={`/instances?workflow=${encodeURIComponent(name)}`}>
          all instances of {name} →
        </Link>
      </h2>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.isPending ? <p aria-busy="true">Loading instances…</p> : null}
      {list.data && list.data.items.length === 0 ? (
        <p className="empty">No instances yet. Start one with Run….</p>
      ) : null}
      {list.data && list.data.items.length > 0 ? (
        <table className="list">
          <thead>
            <tr>
              <th>Instance</th>
              <th>Version</th>
              <th>State</th>
              <th>Run type</th>
              <th>Started</th>
              <th>Duration</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((i) => (
              <tr key={i.instanceId}>
                <td>
                  <Link className="mono" to={`/instances/${i.instanceId}`}>
                    {i.instanceId.slice(0, 8)}
                  </Link>
                </td>
                <td>{i.version}</td>
                <td>
                  <StateBadge state={i.state} />
                </td>
                <td>{i.runType ?? "-"}</td>
                <td>{formatInstant(i.startedAt)}</td>
                <td>{formatSpan(i.startedAt, i.endedAt, now)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

/**
 * The backfills, newest first: workflow, state, mode and parallelism, the range of nominal times,
 * progress (done, running, failed and pending of the total, as stacked segments with the counts
 * in words) and creation time. Workflow and state filters and the page live in the URL; it
 * refreshes every 3 s while any backfill shown is running.
 */
import { useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import type { Backfill } from "../../../lib/cli/api-types.generated";
import { api, type Page, withQuery } from "../api";
import { BackfillProgress } from "../components/backfills/BackfillProgress";
import { BackfillStateBadge, backfillLive } from "../components/backfills/BackfillStateBadge";
import { formatMode, formatRange } from "../components/backfills/describe";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant } from "../components/format";
import "./scheduling.css";
import { OlderLink } from "../components/OlderLink";

const STATES: Backfill["state"][] = ["RUNNING", "PAUSED", "CANCELLED", "SUCCESS", "FAILURE"];

/** The backfills list (`/backfills?workflow=…&state=…`). */
export function BackfillsPage() {
  const [params, setParams] = useSearchParams();
  const query = {
    workflow: params.get("workflow") ?? undefined,
    state: params.get("state") ?? undefined,
    nextToken: params.get("page") ?? undefined,
    limit: "50",
  };
  const list = useQuery({
    queryKey: ["backfills", query],
    queryFn: () => api<Page<Backfill>>(withQuery("/v1/backfills", query)),
    // Live while a backfill shown moves; slow otherwise (a new one may be started elsewhere).
    refetchInterval: (q) => (q.state.data?.items.some(backfillLive) ? 3_000 : 30_000),
  });
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete("page");
    setParams(next);
  };
  const filtered = !!(query.workflow || query.state || query.nextToken);
  return (
    <main>
      <h1>Backfills</h1>
      <form className="filters" aria-label="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Workflow{" "}
          <input
            name="workflow"
            key={query.workflow ?? ""}
            defaultValue={query.workflow ?? ""}
            onBlur={(e) => set("workflow", e.currentTarget.value.trim())}
            onKeyDown={(e) => e.key === "Enter" && set("workflow", e.currentTarget.value.trim())}
          />
        </label>
        <label>
          State{" "}
          <select value={query.state ?? ""} onChange={(e) => set("state", e.currentTarget.value)}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </form>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.isPending ? <p aria-busy="true">Loading…</p> : null}
      {list.data && list.data.items.length === 0 ? (
        <p className="empty">
          {filtered
            ? "No backfill matches (a filtered page may be empty while older pages match)."
            : "No backfills yet."}{" "}
          Start one with{" "}
          <code>shoal backfill &lt;workflow&gt; --from … --to … --cron "0 0 * * *"</code> or{" "}
          <code>POST /v1/workflows/&lt;workflow&gt;/backfill</code>.
        </p>
      ) : null}
      {list.data && list.data.items.length > 0 ? (
        <table className="list backfills">
          <thead>
            <tr>
              <th>Backfill</th>
              <th>Workflow</th>
              <th>State</th>
              <th>Mode</th>
              <th>Nominal times</th>
              <th>Progress</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((b) => (
              <tr key={b.id}>
                <td>
                  <Link to={`/backfills/${b.id}`} className="mono">
                    {b.id.slice(0, 8)}
                  </Link>
                </td>
                <td>
                  <Link to={`/workflows/${encodeURIComponent(b.workflow)}`}>{b.workflow}</Link>
                </td>
                <td>
                  <BackfillStateBadge state={b.state} />
                </td>
                <td>{formatMode(b)}</td>
                <td className="mono range" title={b.timezone ?? "UTC"}>
                  {formatRange(b)}
                </td>
                <td>
                  <BackfillProgress b={b} />
                </td>
                <td>{formatInstant(b.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <OlderLink nextToken={list.data?.nextToken} />
    </main>
  );
}

/**
 * The workflows (DolphinScheduler's workflow definition list): each with its latest version,
 * release state, description, the next fire of its ONLINE schedules (in the schedule's zone),
 * its last runs as state dots linking to each instance, and a Run form. One request per page
 * (`GET /v1/workflows?include=summary`), refreshed every 15 s while something runs, else every
 * minute (the next fire moves on).
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { api, type Page } from "../api";
import { ErrorNote } from "../components/ErrorNote";
import { RunForm } from "../components/RunForm";
import { LastRuns } from "../components/workflow/LastRuns";
import type { WorkflowListItem } from "../components/workflow/types";
import { formatInZone } from "../model/zone-time";
import "./workflows.css";

const FINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);
/** The API's largest page with `include=summary`. */
const PAGE = 50;

export function WorkflowsPage() {
  const [params, setParams] = useSearchParams();
  const token = params.get("page") ?? undefined;
  const list = useQuery({
    queryKey: ["workflows", "summary", token],
    queryFn: () =>
      api<Page<WorkflowListItem>>(
        `/v1/workflows?include=summary&limit=${PAGE}${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
      ),
    refetchInterval: (q) =>
      q.state.data?.items.some((w) => w.lastRuns?.some((r) => !FINAL.has(r.state)))
        ? 15_000
        : 60_000,
  });
  const [running, setRunning] = useState<string>();
  const items = list.data?.items;
  return (
    <main>
      <h1>Workflows</h1>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.isPending ? <p aria-busy="true">Loading workflows…</p> : null}
      {items && items.length === 0 && !token ? (
        <p className="empty">
          No workflows yet. Create one with <code>shoal apply workflow.yaml</code> or{" "}
          <code>PUT /v1/workflows/&lt;name&gt;</code>.
        </p>
      ) : null}
      {items && items.length > 0 ? (
        <table className="list workflows">
          <thead>
            <tr>
              <th>Workflow</th>
              <th>Version</th>
              <th>Release</th>
              <th>Description</th>
              <th>Next fire</th>
              <th>Last runs (newest first)</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {items.map((w) => (
              <tr key={w.name}>
                <td>
                  <Link to={`/workflows/${encodeURIComponent(w.name)}`}>{w.name}</Link>{" "}
                  <Link
                    className="small"
                    to={`/instances?workflow=${encodeURIComponent(w.name)}`}
                    aria-label={`instances of ${w.name}`}
                  >
                    runs
                  </Link>
                </td>
                <td>{w.version}</td>
                <td>
                  <span className={`release release-${w.releaseState.toLowerCase()}`}>
                    {w.releaseState === "ONLINE" ? "● ONLINE" : "○ OFFLINE"}
                  </span>
                </td>
                <td>
                  {w.displayName ? <strong>{w.displayName}</strong> : null}
                  {w.displayName && w.description ? " — " : null}
                  {w.description ?? ""}
                </td>
                <td className="mono">
                  {w.nextFireAt
                    ? `${formatInZone(w.nextFireAt, w.nextFireTimezone ?? "UTC")} (${w.nextFireTimezone ?? "UTC"})`
                    : "-"}
                </td>
                <td>
                  <LastRuns runs={w.lastRuns ?? []} />
                </td>
                <td>
                  <button type="button" onClick={() => setRunning(w.name)}>
                    Run…
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div className="controls">
        {token ? (
          <button type="button" onClick={() => setParams({})}>
            First page
          </button>
        ) : null}
        {list.data?.nextToken ? (
          <button type="button" onClick={() => setParams({ page: list.data?.nextToken ?? "" })}>
            Next page
          </button>
        ) : null}
      </div>
      {running ? <RunForm workflow={running} onClose={() => setRunning(undefined)} /> : null}
    </main>
  );
}

/**
 * The grid (Airflow's): the workflow's last N runs as columns, oldest left, its tasks as rows in
 * the graph's order, a cell per task state (colour and icon; the word on hover). N is chosen by
 * the user and remembered in this browser. One request: `GET /v1/instances?include=tasks`.
 * A cell opens that run with that task's panel; the current run's column is outlined.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useNavigate } from "react-router";
import { api, type InstanceSummary, type Page, withQuery } from "../api";
import type { DagTask } from "../model/gantt";
import { buildGrid } from "../model/grid";
import { ErrorNote } from "./ErrorNote";
import { StateBadge, stateLook } from "./StateBadge";

const CHOICES = [10, 25, 50, 100];
const KEY = "shoal.grid.runs";

function remembered(): number {
  const n = Number(window.localStorage.getItem(KEY));
  return CHOICES.includes(n) ? n : 25;
}

export function GridView(props: {
  workflow: string;
  current: string;
  tasks: readonly DagTask[];
  live: boolean;
}) {
  const navigate = useNavigate();
  const [runs, setRuns] = useState(remembered);
  const list = useQuery({
    queryKey: ["grid", props.workflow, runs],
    queryFn: () =>
      api<Page<InstanceSummary>>(
        withQuery("/v1/instances", {
          workflow: props.workflow,
          include: "tasks",
          limit: String(runs),
        }),
      ),
    refetchInterval: props.live ? 3_000 : 30_000,
  });
  if (list.error) return <ErrorNote error={list.error} />;
  if (!list.data) return <p aria-busy="true">Loading the last runs…</p>;
  const grid = buildGrid({ instances: list.data.items, tasks: props.tasks });
  return (
    <figure className="grid-view" aria-label={`grid of ${grid.columns.length} runs`}>
      <figcaption>
        Last{" "}
        <select
          aria-label="runs shown"
          value={runs}
          onChange={(e) => {
            const n = Number(e.currentTarget.value);
            window.localStorage.setItem(KEY, String(n));
            setRuns(n);
          }}
        >
          {CHOICES.map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>{" "}
        runs of {props.workflow}, oldest left.
      </figcaption>
      <table>
        <thead>
          <tr>
            <th />
            {grid.columns.map((c) => (
              <th key={c.instanceId} className={c.instanceId === props.current ? "current" : ""}>
                <button
                  type="button"
                  className="run-head"
                  title={`${c.instanceId} ${c.state}`}
                  onClick={() => navigate(`/instances/${c.instanceId}?view=grid`)}
                >
                  <StateBadge state={c.state} />
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {grid.rows.map((r) => (
            <tr key={r.code}>
              <th className="mono">{r.code}</th>
              {r.cells.map((cell, n) => {
                const run = grid.columns[n];
                const { icon, tone } = stateLook(cell.state);
                return (
                  <td
                    key={run?.instanceId ?? n}
                    className={run?.instanceId === props.current ? "current" : ""}
                  >
                    <button
                      type="button"
                      className={`cell tone-bg-${tone}`}
                      title={`${r.code}: ${cell.state}${cell.task?.attempt ? ` (attempt ${cell.task.attempt})` : ""}`}
                      aria-label={`${r.code} in run ${run?.instanceId.slice(0, 8)}: ${cell.state}`}
                      onClick={() =>
                        navigate(
                          `/instances/${run?.instanceId}?view=grid&task=${encodeURIComponent(r.code)}`,
                        )
                      }
                    >
                      {icon}
                    </button>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

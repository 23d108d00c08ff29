/** The workflows, each with its latest version, release state and a Run form. */
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate } from "react-router";
import { api, type Page, type WorkflowSummary } from "../api";
import { ErrorNote } from "../components/ErrorNote";

export function WorkflowsPage() {
  const list = useQuery({
    queryKey: ["workflows"],
    queryFn: () => api<Page<WorkflowSummary>>("/v1/workflows?limit=200"),
  });
  const [running, setRunning] = useState<string>();
  return (
    <main>
      <h1>Workflows</h1>
      {list.error ? <ErrorNote error={list.error} /> : null}
      <table className="list">
        <thead>
          <tr>
            <th>Workflow</th>
            <th>Version</th>
            <th>Release</th>
            <th>Description</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((w) => (
            <tr key={w.name}>
              <td>
                <Link to={`/instances?workflow=${encodeURIComponent(w.name)}`}>{w.name}</Link>
              </td>
              <td>{w.version}</td>
              <td>{w.releaseState}</td>
              <td>{w.description ?? ""}</td>
              <td>
                <button type="button" onClick={() => setRunning(w.name)}>
                  Run…
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {running ? <RunForm workflow={running} onClose={() => setRunning(undefined)} /> : null}
    </main>
  );
}

/** Parses `name=value` lines into parameters; names the first bad line. */
function parseParams(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`parameters, line ${n + 1}: expected name=value`);
    params[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return params;
}

/** Run a workflow: parameters, priority, failure strategy, dry run (POST …/runs). */
function RunForm(props: { workflow: string; onClose: () => void }) {
  const navigate = useNavigate();
  const [params, setParams] = useState("");
  const [priority, setPriority] = useState("");
  const [failureStrategy, setFailureStrategy] = useState("");
  const [dryRun, setDryRun] = useState(false);
  const run = useMutation({
    mutationFn: async () => {
      const body = {
        params: parseParams(params),
        ...(priority ? { priority } : {}),
        ...(failureStrategy ? { failureStrategy } : {}),
        ...(dryRun ? { dryRun } : {}),
      };
      return api<{ instanceId: string }>(
        `/v1/workflows/${encodeURIComponent(props.workflow)}/runs`,
        { method: "POST", body: JSON.stringify(body) },
      );
    },
    onSuccess: (r) => navigate(`/instances/${r.instanceId}`),
  });
  return (
    <form
      className="dialog"
      aria-label={`run ${props.workflow}`}
      onSubmit={(e) => {
        e.preventDefault();
        run.mutate();
      }}
    >
      <h2>Run {props.workflow}</h2>
      <label>
        Parameters (name=value, one per line)
        <textarea
          name="params"
          rows={4}
          value={params}
          onChange={(e) => setParams(e.currentTarget.value)}
        />
      </label>
      <label>
        Priority{" "}
        <select
          name="priority"
          value={priority}
          onChange={(e) => setPriority(e.currentTarget.value)}
        >
          <option value="">the workflow's</option>
          {["HIGHEST", "HIGH", "MEDIUM", "LOW", "LOWEST"].map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </label>
      <label>
        Failure strategy{" "}
        <select
          name="failureStrategy"
          value={failureStrategy}
          onChange={(e) => setFailureStrategy(e.currentTarget.value)}
        >
          <option value="">the workflow's</option>
          <option>END</option>
          <option>CONTINUE</option>
        </select>
      </label>
      <label>
        <input
          type="checkbox"
          checked={dryRun}
          onChange={(e) => setDryRun(e.currentTarget.checked)}
        />{" "}
        Dry run
      </label>
      {run.error ? <ErrorNote error={run.error} /> : null}
      <div className="controls">
        <button type="submit" disabled={run.isPending}>
          Run
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

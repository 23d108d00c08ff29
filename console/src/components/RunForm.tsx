/**
 * The Run form of a workflow (POST /v1/workflows/{name}/runs, docs/api.md RunRequest):
 * parameters, priority, start tasks with their scope, failure strategy and dry run. Fields left
 * empty keep the definition's defaults. A 400 or 409 from the API is shown as its message next to
 * the form; a started run opens its instance.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useNavigate } from "react-router";
import { api } from "../api";
import { ErrorNote } from "./ErrorNote";
import type { RunRequest, RunStarted, WorkflowDetail } from "./workflow/types";

/** Parses `name=value` lines into parameters; names the first bad line. */
export function parseParams(text: string): Record<string, string> {
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

const SCOPES: NonNullable<RunRequest["taskScope"]>[] = ["DOWNSTREAM", "UPSTREAM", "ONLY"];

/**
 * Run `workflow` (its latest version). `taskCodes` lists the start-task choices; without it the
 * form reads them from the latest definition.
 */
export function RunForm(props: { workflow: string; taskCodes?: string[]; onClose: () => void }) {
  const navigate = useNavigate();
  const [params, setParams] = useState("");
  const [priority, setPriority] = useState("");
  const [startTasks, setStartTasks] = useState<string[]>([]);
  const [taskScope, setTaskScope] = useState<string>("DOWNSTREAM");
  const [failureStrategy, setFailureStrategy] = useState("");
  const [dryRun, setDryRun] = useState(false);
  // The form opens below the list: its heading takes the focus so that a keyboard user (and a
  // screen reader) lands in it, rather than Tab-ing through every row after the Run… button;
  // closing it gives the focus back to what opened it.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    const opener = document.activeElement;
    return () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per workflow the form opens for
  useEffect(() => heading.current?.focus(), [props.workflow]);
  const latest = useQuery({
    queryKey: ["definition", props.workflow, "latest"],
    queryFn: () => api<WorkflowDetail>(`/v1/workflows/${encodeURIComponent(props.workflow)}`),
    enabled: !props.taskCodes,
  });
  const codes = props.taskCodes ?? latest.data?.tasks.map((t) => t.code) ?? [];
  const run = useMutation({
    mutationFn: async () => {
      const body: RunRequest = {
        params: parseParams(params),
        ...(priority ? { priority: priority as RunRequest["priority"] } : {}),
        ...(startTasks.length > 0
          ? { startTasks, taskScope: taskScope as RunRequest["taskScope"] }
          : {}),
        ...(failureStrategy
          ? { failureStrategy: failureStrategy as RunRequest["failureStrategy"] }
          : {}),
        ...(dryRun ? { dryRun } : {}),
      };
      return api<RunStarted>(`/v1/workflows/${encodeURIComponent(props.workflow)}/runs`, {
        method: "POST",
        body: JSON.stringify(body),
      });
    },
    onSuccess: (r) => navigate(`/instances/${r.instanceId}`),
  });
  return (
    <form
      className="dialog run-form"
      aria-label={`run ${props.workflow}`}
      onSubmit={(e) => {
        e.preventDefault();
        run.mutate();
      }}
    >
      <h2 ref={heading} tabIndex={-1}>
        Run {props.workflow}
      </h2>
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
        Start tasks (none chosen: every task runs; Ctrl/⌘-click for several)
        <select
          name="startTasks"
          multiple
          size={Math.min(6, Math.max(2, codes.length))}
          value={startTasks}
          onChange={(e) =>
            setStartTasks(Array.from(e.currentTarget.selectedOptions, (o) => o.value))
          }
        >
          {codes.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      {latest.error ? <ErrorNote error={latest.error} /> : null}
      <label>
        Scope{" "}
        <select
          name="taskScope"
          value={taskScope}
          disabled={startTasks.length === 0}
          onChange={(e) => setTaskScope(e.currentTarget.value)}
        >
          {SCOPES.map((s) => (
            <option key={s} value={s}>
              {s === "DOWNSTREAM"
                ? "DOWNSTREAM (them and everything after)"
                : s === "UPSTREAM"
                  ? "UPSTREAM (them and everything before)"
                  : "ONLY (just them)"}
            </option>
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
        Dry run (nothing executes; each task logs what it would run)
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

/**
 * One instance: its state and progress, the controls its state allows (each confirmed; a 409 is
 * shown as the API's message), its tasks, and a side panel with the chosen task's attempts and
 * log. Live: refreshed every 2 s until the instance is over.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { api, type Instance, type WorkflowDetail } from "../api";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant, formatSpan } from "../components/format";
import { GanttView } from "../components/GanttView";
import { GridView } from "../components/GridView";
import { StateBadge } from "../components/StateBadge";
import { TaskPanel } from "../components/TaskPanel";
import { Progress } from "./InstancesPage";

const FINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);
/** The graph (React Flow and ELK) loads only when it is shown. */
const loadGraph = () => import("../components/GraphView");
const GraphView = lazy(loadGraph);
const VIEWS = ["tasks", "graph", "gantt", "grid"] as const;

/** Which controls each instance state allows (DolphinScheduler's rules, docs/api.md). */
const ACTIONS: Record<string, string[]> = {
  SUBMITTED: ["stop"],
  RUNNING: ["stop", "pause"],
  PAUSING: ["stop"],
  PAUSED: ["resume", "stop"],
  STOPPING: [],
  STOPPED: ["rerun", "recover-failed"],
  FAILURE: ["rerun", "recover-failed"],
  SUCCESS: ["rerun"],
};

export function InstancePage() {
  const { id = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const task = params.get("task") ?? undefined;
  const client = useQueryClient();
  const view = (VIEWS as readonly string[]).includes(params.get("view") ?? "")
    ? (params.get("view") as (typeof VIEWS)[number])
    : "tasks";
  // The Gantt draws every attempt (retries, failovers, earlier rounds): the same read, one field more.
  const withAttempts = view === "gantt";
  // The graph's code loads while the instance and its definition are read, not after.
  if (view === "graph") void loadGraph();
  const inst = useQuery({
    queryKey: ["instance", id, withAttempts],
    queryFn: () =>
      api<Instance>(
        `/v1/instances/${encodeURIComponent(id)}${withAttempts ? "?include=attempts" : ""}`,
      ),
    refetchInterval: (q) => (q.state.data && FINAL.has(q.state.data.state) ? false : 2_000),
    placeholderData: (previous) => previous,
  });
  const [acted, setActed] = useState<string>();
  const definition = useQuery({
    queryKey: ["definition", inst.data?.workflow, inst.data?.version],
    queryFn: () =>
      api<WorkflowDetail>(
        `/v1/workflows/${encodeURIComponent(inst.data?.workflow ?? "")}?version=${inst.data?.version}`,
      ),
    enabled: view !== "tasks" && !!inst.data,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const control = useMutation({
    mutationFn: (verb: string) =>
      api(`/v1/instances/${encodeURIComponent(id)}/${verb}`, { method: "POST", body: "{}" }),
    onSuccess: (_d, verb) => {
      setActed(`${verb} requested`);
      void client.invalidateQueries({ queryKey: ["instance", id] });
    },
  });
  if (inst.error)
    return (
      <main>
        <ErrorNote error={inst.error} />
      </main>
    );
  const i = inst.data;
  if (!i) return <main aria-busy="true">Loading…</main>;
  const now = Date.now();
  const choose = (code: string) => {
    const next = new URLSearchParams(params);
    next.set("task", code);
    setParams(next);
  };
  return (
    <main className={task ? "with-panel" : ""}>
      <div className="content">
        <p className="crumbs">
          <Link to="/instances">Instances</Link> /{" "}
          <Link to={`/instances?workflow=${i.workflow}`}>{i.workflow}</Link>
        </p>
        <h1>
          {i.workflow}:{i.version} <StateBadge state={i.state} />
        </h1>
        <dl className="facts">
          <dt>Instance</dt>
          <dd className="mono">{i.instanceId}</dd>
          <dt>Run type</dt>
          <dd>{i.runType ?? "-"}</dd>
          {i.parent ? (
            <>
              <dt>Parent</dt>
              <dd>
                {/* The parent with its SUB_WORKFLOW task's panel open: the way back up. */}
                <Link
                  className="mono"
                  to={`/instances/${i.parent.instanceId}?task=${encodeURIComponent(i.parent.code)}`}
                >
                  {i.parent.instanceId.slice(0, 8)}
                </Link>{" "}
                task <span className="mono">{i.parent.code}</span>
              </dd>
            </>
          ) : null}
          <dt>Schedule time</dt>
          <dd>{formatInstant(i.scheduleTime)}</dd>
          <dt>Started</dt>
          <dd>{formatInstant(i.startedAt)}</dd>
          <dt>Duration</dt>
          <dd>{formatSpan(i.startedAt, i.endedAt, now)}</dd>
          <dt>Progress</dt>
          <dd>{i.progress ? <Progress {...i.progress} /> : "-"}</dd>
          {i.error ? (
            <>
              <dt>Error</dt>
              <dd>{i.error}</dd>
            </>
          ) : null}
        </dl>
        <div className="controls">
          {(ACTIONS[i.state] ?? []).map((verb) => (
            <button
              type="button"
              key={verb}
              disabled={control.isPending}
              onClick={() => {
                if (
                  window.confirm(`${verb} instance ${i.instanceId.slice(0, 8)} of ${i.workflow}?`)
                )
                  control.mutate(verb);
              }}
            >
              {verb}
            </button>
          ))}
          {control.error ? <ErrorNote error={control.error} /> : null}
          {acted && !control.error ? <span className="note">{acted}</span> : null}
        </div>
        <div className="tabs" role="tablist" aria-label="views of the instance">
          {VIEWS.map((v) => (
            <button
              type="button"
              role="tab"
              key={v}
              aria-selected={view === v}
              onClick={() => {
                const next = new URLSearchParams(params);
                next.set("view", v);
                setParams(next);
              }}
            >
              {v[0]?.toUpperCase() + v.slice(1)}
            </button>
          ))}
        </div>
        {view !== "tasks" && definition.error ? <ErrorNote error={definition.error} /> : null}
        {view === "graph" && definition.data ? (
          <Suspense fallback={<p aria-busy="true">Loading the graph…</p>}>
            <GraphView
              tasks={definition.data.tasks}
              attempts={i.tasks ?? []}
              {...(task ? { chosen: task } : {})}
              onChoose={choose}
            />
          </Suspense>
        ) : null}
        {view === "gantt" && definition.data ? (
          <GanttView
            tasks={definition.data.tasks}
            attempts={i.attempts ?? i.tasks ?? []}
            timeZone={Intl.DateTimeFormat().resolvedOptions().timeZone}
            {...(task ? { chosen: task } : {})}
            onChoose={choose}
          />
        ) : null}
        {view === "grid" && definition.data ? (
          <GridView
            workflow={i.workflow}
            current={i.instanceId}
            tasks={definition.data.tasks}
            live={!FINAL.has(i.state)}
          />
        ) : null}
        {view === "tasks" ? (
          <table className="list tasks">
            <thead>
              <tr>
                <th>Task</th>
                <th>Type</th>
                <th>State</th>
                <th>Attempt</th>
                <th>Started</th>
                <th>Duration</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {i.tasks?.map((t) => (
                <tr
                  key={t.code}
                  className={t.code === task ? "chosen" : ""}
                  tabIndex={0}
                  onClick={() => choose(t.code)}
                  onKeyDown={(e) => e.key === "Enter" && choose(t.code)}
                >
                  <td className="mono">{t.code}</td>
                  <td>{t.type ?? "-"}</td>
                  <td>
                    <StateBadge state={t.state} />
                  </td>
                  <td>{t.attempt}</td>
                  <td>{formatInstant(t.startedAt)}</td>
                  <td>{formatSpan(t.startedAt, t.endedAt, now)}</td>
                  <td className="error-cell">{t.error ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </div>
      {task ? (
        <TaskPanel
          instanceId={i.instanceId}
          instanceState={i.state}
          code={task}
          live={!FINAL.has(i.state)}
          onClose={() => {
            const next = new URLSearchParams(params);
            next.delete("task");
            setParams(next);
          }}
        />
      ) : null}
    </main>
  );
}

/**
 * One workflow: its name, description, latest version and release state (with a confirmed
 * Online/Offline switch), a Run form, and views kept in the URL (`?view=`): the DAG of the
 * chosen version (`?version=N`, the latest by default) with a side panel of the chosen task's
 * definition (`?task=`), its YAML, its versions and the diff between two, its schedules and
 * triggers, and its recent instances. The latest version is read again every 30 s (someone may
 * apply a new one); a stored version never changes and is read once.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { api } from "../api";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant } from "../components/format";
import { RunForm } from "../components/RunForm";
import { RecentInstances } from "../components/workflow/RecentInstances";
import { SchedulesView } from "../components/workflow/SchedulesView";
import { TaskDefinitionPanel } from "../components/workflow/TaskDefinitionPanel";
import type { WorkflowDetail } from "../components/workflow/types";
import { useVersion } from "../components/workflow/use-version";
import { VersionsView } from "../components/workflow/VersionsView";
import { YamlView } from "../components/workflow/YamlView";
import "./workflows.css";

/** The graph (React Flow and ELK) loads only when it is shown. */
const loadGraph = () => import("../components/GraphView");
const GraphView = lazy(loadGraph);
const VIEWS = ["graph", "yaml", "versions", "schedules", "instances"] as const;
type View = (typeof VIEWS)[number];
const TITLES: Record<View, string> = {
  graph: "Graph",
  yaml: "YAML",
  versions: "Versions",
  schedules: "Schedules & triggers",
  instances: "Instances",
};
const NO_ATTEMPTS: never[] = [];

export function WorkflowPage() {
  const { name = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const client = useQueryClient();
  const [running, setRunning] = useState(false);
  const [acted, setActed] = useState<string>();
  const latest = useQuery({
    queryKey: ["definition", name, "latest"],
    queryFn: () => api<WorkflowDetail>(`/v1/workflows/${encodeURIComponent(name)}`),
    refetchInterval: 30_000,
  });
  const asked = Number(params.get("version"));
  const head = latest.data;
  const version =
    head && Number.isInteger(asked) && asked >= 1 && asked <= head.version ? asked : head?.version;
  const chosen = useVersion(name, version ?? 0);
  const view: View = (VIEWS as readonly string[]).includes(params.get("view") ?? "")
    ? (params.get("view") as View)
    : "graph";
  // The graph's code loads while the definition is read, not after.
  if (view === "graph") void loadGraph();
  const task = params.get("task") ?? undefined;
  const release = useMutation({
    mutationFn: (state: "ONLINE" | "OFFLINE") =>
      api(`/v1/workflows/${encodeURIComponent(name)}/release`, {
        method: "POST",
        body: JSON.stringify({ state }),
      }),
    onSuccess: (_d, state) => {
      setActed(`now ${state}`);
      void client.invalidateQueries({ queryKey: ["definition", name, "latest"] });
      void client.invalidateQueries({ queryKey: ["workflows"] });
    },
  });
  const set = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) v === undefined ? next.delete(k) : next.set(k, v);
    setParams(next);
  };
  if (latest.error)
    return (
      <main>
        <p className="crumbs">
          <Link to="/workflows">Workflows</Link>
        </p>
        <ErrorNote error={latest.error} />
      </main>
    );
  if (!head) return <main aria-busy="true">Loading {name}…</main>;
  const def = chosen.data;
  const chosenTask = task ? def?.tasks.find((t) => t.code === task) : undefined;
  const other = head.releaseState === "ONLINE" ? "OFFLINE" : "ONLINE";
  return (
    <main className={chosenTask && view === "graph" ? "with-panel" : ""}>
      <div className="content">
        <p className="crumbs">
          <Link to="/workflows">Workflows</Link> /{" "}
          <Link to={`/instances?workflow=${encodeURIComponent(name)}`}>its instances</Link>
        </p>
        <h1>
          {name}
          <span className={`release release-${head.releaseState.toLowerCase()}`}>
            {head.releaseState === "ONLINE" ? "● ONLINE" : "○ OFFLINE"}
          </span>
        </h1>
        {head.displayName ? (
          <p>
            <strong>{head.displayName}</strong>
          </p>
        ) : null}
        {head.description ? <p>{head.description}</p> : null}
        <dl className="facts">
          <dt>Latest version</dt>
          <dd>
            {head.version} (stored {formatInstant(head.createdAt)})
          </dd>
          <dt>Viewing</dt>
          <dd>
            version {version}
            {version !== head.version ? (
              <>
                {" "}
                <button type="button" className="link" onClick={() => set({ version: undefined })}>
                  back to the latest
                </button>
              </>
            ) : null}
          </dd>
          <dt>Defaults</dt>
          <dd>
            priority {head.priority ?? "MEDIUM"}, failure strategy {head.failureStrategy ?? "END"}
            {head.timezone ? `, zone ${head.timezone}` : ""}
          </dd>
        </dl>
        <div className="controls">
          <button type="button" onClick={() => setRunning(true)}>
            Run…
          </button>
          <button
            type="button"
            disabled={release.isPending}
            onClick={() => {
              const effect =
                other === "OFFLINE"
                  ? "It will refuse new runs, and its schedules and triggers will start nothing."
                  : "Its schedules and triggers will start runs again.";
              if (window.confirm(`Take ${name} ${other}? ${effect}`)) release.mutate(other);
            }}
          >
            {other === "OFFLINE" ? "Take offline" : "Bring online"}
          </button>
          {release.error ? <ErrorNote error={release.error} /> : null}
          {acted && !release.error ? <span className="note">{acted}</span> : null}
        </div>
        {running ? (
          <RunForm
            workflow={name}
            taskCodes={head.tasks.map((t) => t.code)}
            onClose={() => setRunning(false)}
          />
        ) : null}
        <div className="tabs" role="tablist" aria-label="views of the workflow">
          {VIEWS.map((v) => (
            <button
              type="button"
              role="tab"
              key={v}
              aria-selected={view === v}
              onClick={() => set({ view: v })}
            >
              {TITLES[v]}
            </button>
          ))}
        </div>
        {(view === "graph" || view === "yaml") && chosen.error ? (
          <ErrorNote error={chosen.error} />
        ) : null}
        {(view === "graph" || view === "yaml") && !def && !chosen.error ? (
          <p aria-busy="true">Loading version {version}…</p>
        ) : null}
        {view === "graph" && def ? (
          <label className="task-pick">
            Task definition{" "}
            <select
              value={task ?? ""}
              onChange={(e) => set({ task: e.currentTarget.value || undefined })}
            >
              <option value="">(click a node, or choose one)</option>
              {def.tasks.map((t) => (
                <option key={t.code} value={t.code}>
                  {`${t.displayName ? `${t.displayName} · ` : ""}${t.code} (${t.type})`}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {view === "graph" && def ? (
          <Suspense fallback={<p aria-busy="true">Loading the graph…</p>}>
            <GraphView
              tasks={def.tasks}
              attempts={NO_ATTEMPTS}
              {...(task ? { chosen: task } : {})}
              onChoose={(code) => set({ task: code })}
            />
          </Suspense>
        ) : null}
        {view === "yaml" && def ? <YamlView definition={def} /> : null}
        {view === "versions" ? (
          <VersionsView name={name} latest={head.version} viewing={version ?? head.version} />
        ) : null}
        {view === "schedules" ? <SchedulesView name={name} /> : null}
        {view === "instances" ? <RecentInstances name={name} /> : null}
      </div>
      {chosenTask && view === "graph" ? (
        <TaskDefinitionPanel
          task={chosenTask}
          onChoose={(code) => set({ task: code })}
          onClose={() => set({ task: undefined })}
        />
      ) : null}
    </main>
  );
}

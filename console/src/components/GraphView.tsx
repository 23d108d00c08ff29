/**
 * The instance's DAG (Airflow 3's and the Step Functions console's graph): laid out left to right
 * by ELK's layered algorithm once per definition version, drawn by React Flow. Live updates only
 * change the nodes' states, never the layout. Each node shows the task's code, type, state
 * (colour, icon, word), attempt and duration; clicking one opens the task panel; a SUB_WORKFLOW
 * node links to its child instance. Loaded on demand (it is the console's largest part).
 */
import {
  Background,
  Controls,
  type Edge,
  Handle,
  MiniMap,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  type ReactFlowInstance,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import ELK from "elkjs/lib/elk-api.js";
// ELK runs in a Web Worker: its 1.4 MB of code is parsed and run off the page's thread, so the
// page stays responsive while a big DAG is laid out (Vite copies the file and gives its URL).
import elkWorkerUrl from "elkjs/lib/elk-worker.min.js?url";
import { useEffect, useMemo, useRef, useState } from "react";
import { Link } from "react-router";
import type { TaskInstance } from "../api";
import type { DagTask } from "../model/gantt";
import { formatDurationBrief } from "../model/time-axis";
import { StateBadge } from "./StateBadge";

/** Room for a state, the type, the attempt and a duration such as "23 h 59 min" (styles.css). */
const NODE_W = 250;
const NODE_H = 64;
/**
 * Past this many tasks the graph opens at a readable zoom on the DAG's start, with a minimap,
 * instead of fitting everything: 1,700 nodes fitted are unreadable dots, and React Flow then
 * renders every one of them (it skips only nodes outside the view).
 */
const BIG_DAG = 150;

type TaskNodeData = {
  code: string;
  /** The name people read (an imported DolphinScheduler name), shown instead of the code. */
  displayName?: string;
  type: string;
  task?: TaskInstance;
  chosen: boolean;
  now: number;
};

function TaskNode({ data }: NodeProps<Node<TaskNodeData>>) {
  const t = data.task;
  const ms = t?.startedAt
    ? (t.endedAt ? Date.parse(t.endedAt) : data.now) - Date.parse(t.startedAt)
    : undefined;
  return (
    <div
      className={`dag-node${data.chosen ? " chosen" : ""}`}
      title={`${data.displayName ? `${data.displayName} · ` : ""}${data.code} (${data.type})`}
    >
      <Handle type="target" position={Position.Left} />
      {data.displayName ? (
        <div className="dag-code">{data.displayName}</div>
      ) : (
        <div className="dag-code mono">{data.code}</div>
      )}
      <div className="dag-meta">
        <StateBadge state={t?.state ?? "NOT_STARTED"} />
        <span className="dag-type">{data.type}</span>
        {t ? <span>#{t.attempt}</span> : null}
        {/* Always whole (styles.css .dag-meta): "1 h 43 min" was cut to "1 h 4" by the row. */}
        {ms !== undefined ? <span className="dag-duration">{formatDurationBrief(ms)}</span> : null}
      </div>
      {t?.subInstanceId ? (
        <Link
          className="dag-sub"
          to={`/instances/${t.subInstanceId}`}
          onClick={(e) => e.stopPropagation()}
        >
          child instance →
        </Link>
      ) : null}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

const nodeTypes = { task: TaskNode };

/** ELK positions of the tasks (px), computed once per DAG. */
async function layout(
  tasks: readonly (DagTask & { type?: string })[],
): Promise<Map<string, { x: number; y: number }>> {
  // A worker per layout, ended once it has answered.
  const elk = new ELK({ workerUrl: elkWorkerUrl });
  const codes = new Set(tasks.map((t) => t.code));
  const graph = await elk
    .layout({
      id: "dag",
      layoutOptions: {
        "elk.algorithm": "layered",
        "elk.direction": "RIGHT",
        "elk.layered.spacing.nodeNodeBetweenLayers": "60",
        "elk.spacing.nodeNode": "24",
        // Measured on Epigenomics (1,695 tasks, Node 22, second run): 1,033 ms with spline edge
        // routing and packed components, 416 ms with these. React Flow draws its own edges, so
        // ELK's routes were computed for nothing.
        "elk.edgeRouting": "POLYLINE",
        "elk.separateConnectedComponents": "false",
        "elk.layered.crossingMinimization.thoroughness": "1",
      },
      children: tasks.map((t) => ({ id: t.code, width: NODE_W, height: NODE_H })),
      edges: tasks.flatMap((t) =>
        (t.upstream ?? [])
          .filter((u) => codes.has(u))
          .map((u) => ({ id: `${u}->${t.code}`, sources: [u], targets: [t.code] })),
      ),
    })
    .finally(() => elk.terminateWorker());
  return new Map((graph.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}

export default function GraphView(props: {
  /** The definition's tasks (code, type, upstream), in definition order. */
  tasks: readonly (DagTask & { type?: string; displayName?: string })[];
  /** The instance's current attempt of each task that started. */
  attempts: readonly TaskInstance[];
  chosen?: string;
  onChoose: (code: string) => void;
  /** Layout time, ms, reported once laid out (the console's figures). */
  onLaidOut?: (ms: number) => void;
}) {
  // One state for both, so that a finished layout costs one render of the 1,700 nodes, not two.
  const [laidOut, setLaidOut] = useState<{
    positions: Map<string, { x: number; y: number }>;
    ms: number;
  }>();
  const positions = laidOut?.positions;
  const layoutMs = laidOut?.ms;
  const [error, setError] = useState<string>();
  const { tasks, onLaidOut } = props;
  const big = tasks.length > BIG_DAG;
  const flow = useRef<ReactFlowInstance<Node<TaskNodeData>, Edge>>(undefined);
  const box = useRef<HTMLElement>(null);
  // A small graph stays fitted when its box changes size (a task panel opening beside it).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the box exists once laid out
  useEffect(() => {
    const el = box.current;
    if (!el || big) return;
    const seen = new ResizeObserver(() => void flow.current?.fitView({ maxZoom: 1 }));
    seen.observe(el);
    return () => seen.disconnect();
  }, [big, positions]);
  useEffect(() => {
    let live = true;
    const t0 = performance.now();
    layout(tasks)
      .then((p) => {
        if (!live) return;
        const ms = performance.now() - t0;
        setLaidOut({ positions: p, ms });
        onLaidOut?.(ms);
      })
      .catch((e) => live && setError(String(e?.message ?? e)));
    return () => {
      live = false;
    };
  }, [tasks, onLaidOut]);
  const byCode = useMemo(() => new Map(props.attempts.map((a) => [a.code, a])), [props.attempts]);
  // Running tasks' durations move with each refresh of the attempts, not with every render.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the attempts are what move the clock
  const now = useMemo(() => Date.now(), [props.attempts]);
  const nodes: Node<TaskNodeData>[] = useMemo(
    () =>
      positions
        ? tasks.map((t) => ({
            id: t.code,
            type: "task",
            position: positions.get(t.code) ?? { x: 0, y: 0 },
            data: {
              code: t.code,
              ...(t.displayName ? { displayName: t.displayName } : {}),
              type: t.type ?? "",
              task: byCode.get(t.code),
              chosen: t.code === props.chosen,
              now,
            },
            draggable: false,
          }))
        : [],
    [positions, tasks, byCode, props.chosen, now],
  );
  const edges: Edge[] = useMemo(
    () =>
      tasks.flatMap((t) =>
        (t.upstream ?? []).map((u) => ({
          id: `${u}->${t.code}`,
          source: u,
          target: t.code,
          animated: byCode.get(t.code)?.state === "RUNNING",
          className:
            byCode.get(u)?.state === "SKIPPED" || byCode.get(t.code)?.state === "SKIPPED"
              ? "not-taken"
              : "",
        })),
      ),
    [tasks, byCode],
  );
  if (error)
    return (
      <p className="error" role="alert">
        The graph could not be laid out: {error}
      </p>
    );
  if (!positions) return <p aria-busy="true">Laying out {tasks.length} tasks…</p>;
  return (
    <figure
      ref={box}
      className="graph"
      aria-label={`graph of ${tasks.length} tasks`}
      data-layout-ms={layoutMs === undefined ? undefined : Math.round(layoutMs)}
    >
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodeClick={(_e, n) => props.onChoose(n.id)}
        onInit={(f) => {
          flow.current = f;
        }}
        fitView={!big}
        fitViewOptions={{ maxZoom: 1 }}
        defaultViewport={{ x: 16, y: 16, zoom: 0.75 }}
        minZoom={0.05}
        nodesConnectable={false}
        proOptions={{ hideAttribution: true }}
        onlyRenderVisibleElements
      >
        <Background />
        <Controls showInteractive={false} />
        {big ? (
          <MiniMap pannable zoomable ariaLabel="where the view is in the whole graph" />
        ) : null}
      </ReactFlow>
    </figure>
  );
}

/**
 * The instance's Gantt chart: one row per task in the graph's (topological) order, a bar per
 * attempt (queued part lighter), a time axis readable from sub-second to multi-day runs, bars
 * never narrower than 3 px, exact times on hover, and the critical path outlined.
 * Plain SVG aligned to the rows (the Airflow maintainers' choice over a chart library).
 */
import { useLayoutEffect, useMemo, useRef, useState } from "react";
import type { TaskInstance } from "../api";
import { buildGantt, type DagTask, layoutGantt } from "../model/gantt";
import { formatDurationPrecise, makeTimeAxis } from "../model/time-axis";
import { stateLook } from "./StateBadge";

const ROW_H = 24;
const LABEL_W = 180;
const AXIS_H = 26;

export function GanttView(props: {
  tasks: readonly DagTask[];
  attempts: readonly TaskInstance[];
  timeZone: string;
  chosen?: string;
  onChoose: (code: string) => void;
}) {
  const now = Date.now();
  // The chart fills its container, and follows it when the side panel opens or the window resizes.
  const box = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(1000);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const seen = new ResizeObserver(([e]) => e && setWidth(Math.floor(e.contentRect.width)));
    seen.observe(el);
    return () => seen.disconnect();
  }, []);
  const model = useMemo(
    () => buildGantt({ tasks: props.tasks, attempts: props.attempts, nowMs: now }),
    [props.tasks, props.attempts, now],
  );
  if (!model.range)
    return (
      <figure ref={box} className="gantt" aria-label="Gantt chart of 0 tasks">
        <figcaption>No task has started yet.</figcaption>
      </figure>
    );
  const plotW = Math.max(200, width - LABEL_W - 20);
  const axis = makeTimeAxis({
    startMs: model.range.startMs,
    endMs: model.range.endMs,
    widthPx: plotW,
    timeZone: props.timeZone,
  });
  const rows = layoutGantt(model, axis);
  const height = AXIS_H + rows.length * ROW_H;
  return (
    <figure ref={box} className="gantt" aria-label={`Gantt chart of ${rows.length} tasks`}>
      <svg width={LABEL_W + plotW + 10} height={height} role="img" aria-label="attempts over time">
        <g transform={`translate(${LABEL_W},0)`}>
          {axis.ticks.map((t) => (
            <g key={t.ms} transform={`translate(${t.x},0)`}>
              <line y1={AXIS_H - 6} y2={height} className="tick" />
              <text y={AXIS_H - 10} className="tick-label">
                {t.label}
              </text>
            </g>
          ))}
        </g>
        {rows.map((r, n) => (
          // biome-ignore lint/a11y/useSemanticElements: an SVG row has no semantic element
          <g
            key={r.code}
            transform={`translate(0,${AXIS_H + n * ROW_H})`}
            className={`gantt-row${r.code === props.chosen ? " chosen" : ""}${r.critical ? " critical" : ""}`}
            onClick={() => props.onChoose(r.code)}
            onKeyDown={(e) => e.key === "Enter" && props.onChoose(r.code)}
            tabIndex={0}
            role="button"
            aria-label={`task ${r.code}`}
          >
            <rect x={0} y={0} width={LABEL_W + plotW} height={ROW_H} className="row-bg" />
            <text x={6} y={16} className="row-label mono">
              {r.code}
            </text>
            {r.bars.map((b) => {
              const { tone } = stateLook(b.state);
              return (
                <g key={b.attempt} transform={`translate(${LABEL_W + b.x},5)`}>
                  <title>
                    {`${b.code} attempt ${b.attempt}: ${b.state}\nqueued ${formatDurationPrecise(b.queuedMs)}, ran ${formatDurationPrecise(b.runMs)}${b.task.startedAt ? `\nstarted ${b.task.startedAt}` : ""}${b.task.endedAt ? `\nended ${b.task.endedAt}` : ""}`}
                  </title>
                  <rect
                    width={b.queuedWidth}
                    height={ROW_H - 10}
                    className={`bar-queued tone-${tone}`}
                  />
                  <rect
                    x={b.queuedWidth}
                    width={b.width - b.queuedWidth}
                    height={ROW_H - 10}
                    className={`bar tone-${tone}${b.critical ? " critical" : ""}`}
                  />
                </g>
              );
            })}
          </g>
        ))}
      </svg>
      <figcaption>
        Critical path: {model.criticalPath.join(" → ") || "-"}. Times in {props.timeZone}; hover a
        bar for exact times.
      </figcaption>
    </figure>
  );
}

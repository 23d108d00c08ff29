/**
 * The side panel of one task: why it is not running while it waits (the API's `explain`), its
 * attempts (state, worker, exit code, times, error, warning, OUT parameters), its parameters as
 * resolved, and the log of the chosen attempt (paged, followed while it runs, ANSI colours).
 * Keyboard: the panel's heading takes focus when it opens; Escape closes it and gives focus back
 * to what opened it (the task's row or node).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, type Page, type TaskInstance } from "../api";
import { ErrorNote } from "./ErrorNote";
import { formatInstant } from "./format";
import { Attempts } from "./task/Attempts";
import { ExplainNote } from "./task/ExplainNote";
import { LogView } from "./task/LogView";
import { ResolvedParams } from "./task/ResolvedParams";
import "./task/task-panel.css";

const FINAL_TASK = new Set([
  "SUCCESS",
  "FAILURE",
  "KILLED",
  "FORCED_SUCCESS",
  "SKIPPED",
  "NEED_FAULT_TOLERANCE",
]);

/** Shows task `code` of instance `instanceId`; `live` while the instance is not over. */
export function TaskPanel(props: {
  instanceId: string;
  /** The instance's state: force-success needs FAILURE or STOPPED. */
  instanceState: string;
  code: string;
  live: boolean;
  onClose: () => void;
}) {
  const client = useQueryClient();
  const base = `/v1/instances/${encodeURIComponent(props.instanceId)}/tasks/${encodeURIComponent(props.code)}`;
  const attempts = useQuery({
    queryKey: ["attempts", props.instanceId, props.code],
    queryFn: () => api<Page<TaskInstance>>(`${base}/attempts`),
    refetchInterval: props.live ? 2_000 : false,
  });
  const [chosen, setChosen] = useState<number>();
  // Another task: its own latest attempt, not the number chosen for the previous one.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the task changes
  useEffect(() => setChosen(undefined), [props.code]);
  const list = attempts.data?.items ?? [];
  const attempt = chosen ?? list.at(-1)?.attempt;
  const current = list.find((a) => a.attempt === attempt);
  const latest = list.at(-1);
  // Not running and not over: waiting for something the API can name (or not started at all).
  const waiting =
    props.live && (!latest || (!FINAL_TASK.has(latest.state) && latest.state !== "RUNNING"));
  const showExplain = attempts.isSuccess && (waiting || !latest || latest.state === "SKIPPED");
  // DolphinScheduler's "force success": the latest attempt of a failed or killed task of an
  // instance that is over; a later recover-failed goes on after it.
  const forcible =
    !!latest &&
    (latest.state === "FAILURE" || latest.state === "KILLED") &&
    (props.instanceState === "FAILURE" || props.instanceState === "STOPPED");
  const force = useMutation({
    mutationFn: () => api<TaskInstance>(`${base}/force-success`, { method: "POST", body: "{}" }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ["attempts", props.instanceId, props.code] });
      void client.invalidateQueries({ queryKey: ["instance", props.instanceId] });
    },
  });

  const heading = useRef<HTMLHeadingElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;
  // Focus moves to the panel each time it shows a task; what had focus (outside the panel) is
  // remembered, and gets it back when the panel closes.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs for each task shown
  useEffect(() => {
    const active = document.activeElement;
    if (active instanceof HTMLElement && !heading.current?.closest("aside")?.contains(active))
      opener.current = active;
    heading.current?.focus();
  }, [props.code]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) onClose.current();
    };
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      const back = opener.current;
      if (back?.isConnected) back.focus();
    };
  }, []);

  return (
    <aside className="panel task-panel" aria-label={`task ${props.code}`}>
      <header>
        <h2 className="mono" ref={heading} tabIndex={-1}>
          {props.code}
        </h2>
        <button type="button" onClick={props.onClose} aria-label="close the task panel (Escape)">
          ✕
        </button>
      </header>
      {attempts.error ? <ErrorNote error={attempts.error} /> : null}
      {showExplain ? <ExplainNote base={base} waiting={waiting} /> : null}
      {attempts.isSuccess ? (
        <Attempts attempts={list} chosen={attempt} onChoose={setChosen} />
      ) : attempts.isPending ? (
        <p aria-busy="true">Loading…</p>
      ) : null}
      {forcible ? (
        <div className="controls">
          <button
            type="button"
            disabled={force.isPending}
            onClick={() => {
              if (window.confirm(`Mark task ${props.code} as succeeded (FORCED_SUCCESS)?`))
                force.mutate();
            }}
          >
            force success
          </button>
          {force.error ? <ErrorNote error={force.error} /> : null}
        </div>
      ) : null}
      {current ? (
        <dl className="facts">
          <dt>Submitted</dt>
          <dd>{formatInstant(current.submittedAt)}</dd>
          <dt>Started</dt>
          <dd>{formatInstant(current.startedAt)}</dd>
          <dt>Ended</dt>
          <dd>{formatInstant(current.endedAt)}</dd>
          {current.taskGroup ? (
            <>
              <dt>Task group</dt>
              <dd className="mono">{current.taskGroup}</dd>
            </>
          ) : null}
          {current.error ? (
            <>
              <dt>Error</dt>
              <dd>{current.error}</dd>
            </>
          ) : null}
          {current.warning ? (
            <>
              <dt>Warning</dt>
              <dd>{current.warning}</dd>
            </>
          ) : null}
          {current.outputs && Object.keys(current.outputs).length > 0 ? (
            <>
              <dt>OUT parameters</dt>
              <dd className="mono">
                {Object.entries(current.outputs)
                  .map(([k, v]) => `${k}=${v}`)
                  .join("  ")}
              </dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {attempts.isSuccess ? (
        // Before its first attempt: the parameters attempt 1 would run with.
        <ResolvedParams base={base} attempt={attempt ?? 1} live={props.live} />
      ) : null}
      {attempt !== undefined ? (
        <LogView
          base={base}
          fileStem={`${props.instanceId.slice(0, 8)}-${props.code}`}
          attempt={attempt}
          running={!!current && !FINAL_TASK.has(current.state)}
        />
      ) : null}
    </aside>
  );
}

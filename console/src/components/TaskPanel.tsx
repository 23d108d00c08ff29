/**
 * The side panel of one task: its attempts (state, worker, exit code, error, times) and the log
 * of the chosen attempt, paged through the API (`nextToken`) so a long log is never loaded whole,
 * and followed while the attempt runs.
 */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, type LogPage, type Page, type TaskInstance, withQuery } from "../api";
import { ErrorNote } from "./ErrorNote";
import { formatInstant, formatSpan } from "./format";
import { StateBadge } from "./StateBadge";

const FINAL_TASK = new Set([
  "SUCCESS",
  "FAILURE",
  "KILLED",
  "FORCED_SUCCESS",
  "SKIPPED",
  "NEED_FAULT_TOLERANCE",
]);

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
  const list = attempts.data?.items ?? [];
  const attempt = chosen ?? list.at(-1)?.attempt;
  const current = list.find((a) => a.attempt === attempt);
  const latest = list.at(-1);
  const now = Date.now();
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
  return (
    <aside className="panel" aria-label={`task ${props.code}`}>
      <header>
        <h2 className="mono">{props.code}</h2>
        <button type="button" onClick={props.onClose} aria-label="close the task panel">
          ✕
        </button>
      </header>
      {attempts.error ? <ErrorNote error={attempts.error} /> : null}
      <table className="list attempts">
        <thead>
          <tr>
            <th>#</th>
            <th>State</th>
            <th>Worker</th>
            <th>Exit</th>
            <th>Duration</th>
          </tr>
        </thead>
        <tbody>
          {list.map((a) => (
            <tr
              key={a.attempt}
              className={a.attempt === attempt ? "chosen" : ""}
              tabIndex={0}
              onClick={() => setChosen(a.attempt)}
              onKeyDown={(e) => e.key === "Enter" && setChosen(a.attempt)}
            >
              <td>{a.attempt}</td>
              <td>
                <StateBadge state={a.state} />
              </td>
              <td className="mono">{a.worker ?? "-"}</td>
              <td>{a.exitCode ?? "-"}</td>
              <td>{formatSpan(a.startedAt, a.endedAt, now)}</td>
            </tr>
          ))}
        </tbody>
      </table>
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
      {attempt !== undefined ? (
        <Log base={base} attempt={attempt} running={!!current && !FINAL_TASK.has(current.state)} />
      ) : null}
    </aside>
  );
}

/** The log of one attempt, page by page (1,000 lines each), followed while it runs. */
function Log(props: { base: string; attempt: number; running: boolean }) {
  const log = useInfiniteQuery({
    queryKey: ["log", props.base, props.attempt],
    queryFn: ({ pageParam }) =>
      api<LogPage>(
        withQuery(`${props.base}/log`, { attempt: String(props.attempt), nextToken: pageParam }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextToken,
  });
  const lines = log.data?.pages.flatMap((p) => p.lines) ?? [];
  const more = log.hasNextPage;
  const { fetchNextPage, isFetchingNextPage } = log;
  // Follow a running attempt: its last page always carries a token to poll with.
  useEffect(() => {
    if (!props.running || !more) return;
    const timer = setInterval(() => {
      if (!isFetchingNextPage) void fetchNextPage();
    }, 1_000);
    return () => clearInterval(timer);
  }, [props.running, more, isFetchingNextPage, fetchNextPage]);
  return (
    <section className="log" aria-label="log">
      <h3>
        Log of attempt {props.attempt}{" "}
        <a
          href={withQuery(`${props.base}/log`, { attempt: String(props.attempt), limit: "10000" })}
          download
        >
          download
        </a>
      </h3>
      {log.error ? <ErrorNote error={log.error} /> : null}
      <pre>
        {lines.map((l, n) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: log lines have no identity but their place
          <div key={n}>
            <span className="ts">{l.timestamp.slice(11, 23)}</span> {l.message}
          </div>
        ))}
      </pre>
      {more ? (
        <button
          type="button"
          onClick={() => void log.fetchNextPage()}
          disabled={log.isFetchingNextPage}
        >
          {props.running ? "follow: fetch new lines" : "more"}
        </button>
      ) : null}
    </section>
  );
}

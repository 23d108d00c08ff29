/**
 * The instances list, newest first. Its filters and page live in the URL (so a view is a
 * bookmark); it pages through the API's `nextToken`, never loading everything, and refreshes
 * itself while something on screen is still running.
 */
import { useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import { INSTANCE_STATES } from "../../../lib/core/model.js";
import { RUN_TYPES } from "../../../lib/core/run-type.js";
import { api, type InstanceSummary, type Page, withQuery } from "../api";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant, formatSpan } from "../components/format";
import { OlderLink } from "../components/OlderLink";
import { StateBadge } from "../components/StateBadge";

// The lists the API validates against (lib/core is pure, so it runs in the browser too).
const STATES = INSTANCE_STATES;
const FINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);

/** `datetime-local` input value (the browser's zone) ↔ the API's ISO-8601 instant. */
const toInstant = (local: string) => (local ? new Date(local).toISOString() : "");
const toLocal = (iso: string | undefined) => {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? ""
    : new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function InstancesPage() {
  const [params, setParams] = useSearchParams();
  const filter = {
    workflow: params.get("workflow") ?? undefined,
    state: params.get("state") ?? undefined,
    runType: params.get("runType") ?? undefined,
    scheduledAfter: params.get("scheduledAfter") ?? undefined,
    scheduledBefore: params.get("scheduledBefore") ?? undefined,
    q: params.get("q") ?? undefined,
    nextToken: params.get("page") ?? undefined,
    limit: "50",
  };
  const list = useQuery({
    queryKey: ["instances", filter],
    queryFn: () => api<Page<InstanceSummary>>(withQuery("/v1/instances", filter)),
    // Live while anything shown is not over; slow otherwise (and never in a hidden tab).
    refetchInterval: (q) => (q.state.data?.items.some((i) => !FINAL.has(i.state)) ? 2_000 : 15_000),
  });
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete("page");
    setParams(next);
  };
  const now = Date.now();
  return (
    <main>
      <h1>Instances</h1>
      <form className="filters" aria-label="filters" onSubmit={(e) => e.preventDefault()}>
        <TextFilter label="Workflow" name="workflow" value={filter.workflow} set={set} />
        <ChoiceFilter label="State" name="state" value={filter.state} choices={STATES} set={set} />
        <ChoiceFilter
          label="Run type"
          name="runType"
          value={filter.runType}
          choices={RUN_TYPES}
          set={set}
        />
        <label>
          Scheduled from{" "}
          <input
            type="datetime-local"
            name="scheduledAfter"
            value={toLocal(filter.scheduledAfter)}
            onChange={(e) => set("scheduledAfter", toInstant(e.currentTarget.value))}
          />
        </label>
        <label>
          to{" "}
          <input
            type="datetime-local"
            name="scheduledBefore"
            value={toLocal(filter.scheduledBefore)}
            onChange={(e) => set("scheduledBefore", toInstant(e.currentTarget.value))}
          />
        </label>
        <TextFilter label="Id contains" name="q" value={filter.q} set={set} size={10} />
      </form>
      {list.error ? <ErrorNote error={list.error} /> : null}
      <table className="list">
        <thead>
          <tr>
            <th>Instance</th>
            <th>Workflow</th>
            <th>State</th>
            <th>Schedule time</th>
            <th>Run type</th>
            <th>Started</th>
            <th>Duration</th>
            <th>Progress</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((i) => (
            <tr key={i.instanceId}>
              <td>
                <Link to={`/instances/${i.instanceId}`} className="mono">
                  {i.instanceId.slice(0, 8)}
                </Link>
              </td>
              <td>
                {i.workflow}:{i.version}
              </td>
              <td>
                <StateBadge state={i.state} />
              </td>
              <td>{formatInstant(i.scheduleTime)}</td>
              <td>{i.runType ?? "-"}</td>
              <td>{formatInstant(i.startedAt)}</td>
              <td>{formatSpan(i.startedAt, i.endedAt, now)}</td>
              <td>{i.progress ? <Progress {...i.progress} /> : "-"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.items.length === 0 ? (
        <p className="empty">
          No instance matches (a filtered page may be empty while older pages match).
        </p>
      ) : null}
      <OlderLink nextToken={list.data?.nextToken} />
    </main>
  );
}

/** A text filter: applied when the field is left or Enter is pressed. */
function TextFilter(p: {
  label: string;
  name: string;
  value: string | undefined;
  set: (name: string, value: string) => void;
  size?: number;
}) {
  const apply = (v: string) => p.set(p.name, v.trim());
  return (
    <label>
      {p.label}{" "}
      <input
        name={p.name}
        size={p.size}
        defaultValue={p.value ?? ""}
        onBlur={(e) => apply(e.currentTarget.value)}
        onKeyDown={(e) => e.key === "Enter" && apply(e.currentTarget.value)}
      />
    </label>
  );
}

/** A filter on one of a fixed list of values, or any. */
function ChoiceFilter(p: {
  label: string;
  name: string;
  value: string | undefined;
  choices: readonly string[];
  set: (name: string, value: string) => void;
}) {
  return (
    <label>
      {p.label}{" "}
      <select value={p.value ?? ""} onChange={(e) => p.set(p.name, e.currentTarget.value)}>
        <option value="">any</option>
        {p.choices.map((c) => (
          <option key={c}>{c}</option>
        ))}
      </select>
    </label>
  );
}

/** done/total with a small bar (failed in the failure colour). */
export function Progress(p: { done: number; active: number; failed: number; total: number }) {
  const pct = (n: number) => `${p.total ? (100 * n) / p.total : 0}%`;
  return (
    <span
      className="progress"
      title={`${p.done} done, ${p.active} active, ${p.failed} failed of ${p.total}`}
    >
      <span className="bar" aria-hidden="true">
        <span className="done" style={{ width: pct(p.done) }} />
        <span className="failed" style={{ width: pct(p.failed) }} />
      </span>
      {p.done}/{p.total}
    </span>
  );
}

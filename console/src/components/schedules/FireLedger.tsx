/**
 * A schedule's fire ledger (`GET /v1/schedules/{id}/fires`): what the sweeper decided at each
 * nominal time, oldest first as the API lists it, a page at a time. Each row has the nominal and
 * actual times on the schedule's wall clock, the lateness in words, the decision as a badge, and
 * for FIRED the instance it started. The range (`from`, `to`, nominal times, inclusive) and the
 * page are in the URL; the page refreshes every 5 s while the schedule is online.
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import type { Fire, Schedule } from "../../../../lib/cli/api-types.generated";
import { api, type Page, withQuery } from "../../api";
import { formatInZone, formatLateness, instantToWall, wallToInstant } from "../../model/zone-time";
import { ErrorNote } from "../ErrorNote";
import { DecisionBadge } from "./DecisionBadge";

/** The ledger's answer: a page of fires, and whether the schedule itself was deleted. */
type FirePage = Page<Fire> & { scheduleDeleted?: boolean };

/** The ledger of one schedule, with its range filter and paging. */
export function FireLedger({ s, now }: { s: Schedule; now: number }) {
  const [params, setParams] = useSearchParams();
  const zone = s.timezone;
  const query = {
    from: params.get("from") ?? undefined,
    to: params.get("to") ?? undefined,
    nextToken: params.get("fires") ?? undefined,
    limit: "50",
  };
  const fires = useQuery({
    queryKey: ["fires", s.id, query],
    queryFn: () =>
      api<FirePage>(withQuery(`/v1/schedules/${encodeURIComponent(s.id)}/fires`, query)),
    // New fires arrive while the schedule is online; a queued fire changes when it starts.
    refetchInterval: (q) =>
      s.state === "ONLINE" || q.state.data?.items.some((f) => f.decision === "QUEUED_SERIAL")
        ? 5_000
        : false,
    placeholderData: keepPreviousData,
  });
  const set = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    next.delete("fires");
    setParams(next);
  };
  const items = fires.data?.items ?? [];
  return (
    <section className="ledger" aria-label="fire ledger">
      <h2>Fire ledger</h2>
      <p className="note">
        What the sweeper decided at each nominal time, oldest first. Times on the schedule's wall
        clock ({zone}).
      </p>
      <form className="filters" aria-label="ledger range" onSubmit={(e) => e.preventDefault()}>
        <label>
          Nominal from ({zone}){" "}
          <input
            type="datetime-local"
            name="from"
            value={instantToWall(query.from, zone)}
            onChange={(e) => set({ from: wallToInstant(e.currentTarget.value, zone) })}
          />
        </label>
        <label>
          to{" "}
          <input
            type="datetime-local"
            name="to"
            value={instantToWall(query.to, zone)}
            onChange={(e) => set({ to: wallToInstant(e.currentTarget.value, zone) })}
          />
        </label>
        <button
          type="button"
          onClick={() => set({ from: new Date(now - 3_600_000).toISOString(), to: "" })}
        >
          Last hour
        </button>
        <button
          type="button"
          onClick={() => set({ from: new Date(now - 86_400_000).toISOString(), to: "" })}
        >
          Last day
        </button>
        {query.from || query.to ? (
          <button type="button" onClick={() => set({ from: "", to: "" })}>
            All
          </button>
        ) : null}
      </form>
      {fires.error ? <ErrorNote error={fires.error} /> : null}
      {fires.data?.scheduleDeleted ? (
        <p className="note">This schedule was deleted; its ledger is kept.</p>
      ) : null}
      {fires.isPending ? <p aria-busy="true">Loading…</p> : null}
      {fires.data && items.length === 0 ? (
        <p className="empty">
          {query.from || query.to || query.nextToken
            ? "No fire in this range."
            : s.state === "ONLINE"
              ? "No fire yet: the first is recorded at its nominal time."
              : "No fire recorded: the schedule is offline."}
        </p>
      ) : null}
      {items.length > 0 ? (
        <table className="list fires">
          <thead>
            <tr>
              <th>Nominal time</th>
              <th>Actual time</th>
              <th>Lateness</th>
              <th>Decision</th>
              <th>Instance</th>
            </tr>
          </thead>
          <tbody>
            {items.map((f) => (
              <tr key={f.nominalTime} className={`fire fire-${f.decision.toLowerCase()}`}>
                <td className="mono">{formatInZone(f.nominalTime, zone)}</td>
                <td className="mono">{formatInZone(f.actualTime, zone)}</td>
                <td title={`${f.latenessMs} ms`}>{formatLateness(f.latenessMs)}</td>
                <td>
                  {f.instanceId ? (
                    <Link
                      to={`/instances/${f.instanceId}`}
                      className="badge-link"
                      // The instance column holds the same link for the keyboard.
                      tabIndex={-1}
                    >
                      <DecisionBadge decision={f.decision} />
                    </Link>
                  ) : (
                    <DecisionBadge decision={f.decision} />
                  )}
                </td>
                <td>
                  {f.instanceId ? (
                    <Link to={`/instances/${f.instanceId}`} className="mono">
                      {f.instanceId.slice(0, 8)}
                    </Link>
                  ) : (
                    "-"
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p className="pager">
        {query.nextToken ? <Link to={`?${withoutKey(params, "fires")}`}>← First page</Link> : null}
        {fires.data?.nextToken ? (
          <Link
            to={`?${new URLSearchParams({ ...Object.fromEntries(params), fires: fires.data.nextToken })}`}
          >
            Newer →
          </Link>
        ) : null}
      </p>
    </section>
  );
}

/** The query string without one key. */
function withoutKey(params: URLSearchParams, key: string): string {
  const next = new URLSearchParams(params);
  next.delete(key);
  return next.toString();
}

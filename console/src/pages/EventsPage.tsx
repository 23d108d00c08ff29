/**
 * Events: the newest events on standalone's bus (Shoal's state changes and the events sent to
 * it), newest first, live (every 3 s, backing off while nothing new arrives), filtered by source
 * and detail type in the URL; and a form that sends an event to try the triggers. On AWS the
 * events are on EventBridge: the API's answer says so, and the form still works.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useSearchParams } from "react-router";
import { ApiError, api, withQuery } from "../api";
import { type BusEvent, EventRow } from "../components/admin/EventRow";
import { SendEventForm } from "../components/admin/SendEventForm";
import type { RecentEvents, TriggerOutcome } from "../components/admin/types";
import { useBackoffInterval } from "../components/admin/usePolling";
import { ErrorNote } from "../components/ErrorNote";
import "./admin.css";

const LIMIT = "100";

export function EventsPage() {
  const client = useQueryClient();
  const [params, setParams] = useSearchParams();
  const filter = {
    source: params.get("source") ?? undefined,
    detailType: params.get("detailType") ?? undefined,
  };
  const backoff = useBackoffInterval<RecentEvents>(
    (d) => `${d?.items.length ?? 0}:${String(d?.items[0]?.id ?? "")}`,
  );
  const recent = useQuery({
    queryKey: ["events-recent", filter],
    queryFn: () => api<RecentEvents>(withQuery("/v1/events/recent", { ...filter, limit: LIMIT })),
    // The 404 on AWS is an answer, not a passing failure: never polled again.
    refetchInterval: (q) =>
      q.state.error instanceof ApiError && q.state.error.status === 404
        ? false
        : backoff.interval(q.state.data),
  });
  // What the events sent from this page did (POST /v1/events answers it; the bus does not keep it).
  const [outcomes, setOutcomes] = useState<Record<string, TriggerOutcome[]>>({});
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next);
  };
  const onAws = recent.error instanceof ApiError && recent.error.status === 404;
  const items = (recent.data?.items ?? []) as BusEvent[];
  return (
    <main>
      <h1>Events</h1>
      <div className="events-layout">
        <section aria-label="recent events">
          <form className="filters" aria-label="filters" onSubmit={(e) => e.preventDefault()}>
            <FilterInput label="Source" name="source" value={filter.source} set={set} />
            <FilterInput
              label="Detail type"
              name="detailType"
              value={filter.detailType}
              set={set}
            />
          </form>
          {onAws ? (
            <p className="note" role="note">
              {recent.error?.message}
            </p>
          ) : recent.error ? (
            <ErrorNote error={recent.error} />
          ) : null}
          {recent.isPending ? <p aria-busy="true">Loading…</p> : null}
          {recent.data && items.length === 0 ? (
            <p className="empty">
              {filter.source || filter.detailType
                ? "No recent event matches these filters."
                : "No events yet. Run a workflow, or send one with the form."}
            </p>
          ) : null}
          {items.length > 0 ? (
            <table className="list events">
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Source</th>
                  <th>Detail type</th>
                  <th>About</th>
                  <th>Detail</th>
                </tr>
              </thead>
              <tbody>
                {items.map((e, n) => {
                  const id = typeof e.id === "string" ? e.id : `#${n}`;
                  const sent = outcomes[id];
                  return <EventRow key={id} event={e} {...(sent ? { outcomes: sent } : {})} />;
                })}
              </tbody>
            </table>
          ) : null}
          {items.length > 0 ? (
            <p className="note">
              The newest {items.length} events (standalone keeps the last 1,000).
            </p>
          ) : null}
        </section>
        <SendEventForm
          {...(params.get("sendSource") ? { source: params.get("sendSource") ?? "" } : {})}
          {...(params.get("sendDetailType")
            ? { detailType: params.get("sendDetailType") ?? "" }
            : {})}
          onSent={(id, o) => {
            setOutcomes((m) => ({ ...m, [id]: o }));
            backoff.reset();
            void client.invalidateQueries({ queryKey: ["events-recent"] });
            void client.invalidateQueries({ queryKey: ["trigger-runs"] });
          }}
        />
      </div>
    </main>
  );
}

/** A text filter applied when the field is left or Enter is pressed (the API matches exactly). */
function FilterInput(p: {
  label: string;
  name: string;
  value: string | undefined;
  set: (name: string, value: string) => void;
}) {
  const apply = (v: string) => p.set(p.name, v.trim());
  return (
    <label>
      {p.label}{" "}
      <input
        name={p.name}
        defaultValue={p.value ?? ""}
        onBlur={(e) => apply(e.currentTarget.value)}
        onKeyDown={(e) => e.key === "Enter" && apply(e.currentTarget.value)}
      />
    </label>
  );
}

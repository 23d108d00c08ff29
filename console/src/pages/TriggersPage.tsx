/**
 * Event triggers, newest first: each one's EventBridge pattern, the workflow it starts, its
 * parameter mapping and debounce, and the workflow's last triggered runs (live). Create one with
 * a form, delete one after a confirmation, or open the Events page to send a matching event.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { api, type Page, withQuery } from "../api";
import { LastRuns } from "../components/admin/LastRuns";
import { TriggerForm } from "../components/admin/TriggerForm";
import { TriggerRefusals, TriggerSwitch } from "../components/admin/TriggerSwitch";
import type { Trigger } from "../components/admin/types";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant } from "../components/format";
import "./admin.css";
import "./scheduling.css";

/** A plain value of a pattern field (`{"source": ["x"]}` → "x"), to prefill a test event. */
function firstExact(pattern: Record<string, unknown>, field: string): string | undefined {
  const v = pattern[field];
  return Array.isArray(v) && typeof v[0] === "string" ? v[0] : undefined;
}

/** The Events page's send form, prefilled with what the pattern asks for. */
function testLink(t: Trigger): string {
  return withQuery("/events", {
    sendSource: firstExact(t.eventPattern, "source"),
    sendDetailType: firstExact(t.eventPattern, "detail-type"),
  });
}

export function TriggersPage() {
  const client = useQueryClient();
  const [params, setParams] = useSearchParams();
  const pageToken = params.get("page") ?? undefined;
  const list = useQuery({
    queryKey: ["triggers", pageToken],
    queryFn: () =>
      api<Page<Trigger>>(withQuery("/v1/triggers", { limit: "50", nextToken: pageToken })),
    // Triggers change only when someone creates or deletes one; their runs poll on their own.
    refetchInterval: 30_000,
  });
  const [creating, setCreating] = useState(false);
  const [note, setNote] = useState<string>();
  // The API's warnings about the pattern of the trigger just created (a loop it can start).
  const [warnings, setWarnings] = useState<string[]>([]);
  const remove = useMutation({
    mutationFn: (id: string) => api(`/v1/triggers/${encodeURIComponent(id)}`, { method: "DELETE" }),
    onSuccess: (_d, id) => {
      setNote(`trigger ${id.slice(0, 8)} deleted (the runs it started are kept)`);
      void client.invalidateQueries({ queryKey: ["triggers"] });
    },
  });
  const items = list.data?.items ?? [];
  return (
    <main>
      <h1>Triggers</h1>
      <p className="note">
        A trigger starts its workflow for every event that matches its EventBridge event pattern. It
        sees Shoal's own events only when its pattern names "source": ["shoal"]; a chain of runs
        that start each other is cut off 10 deep, and a trigger starts at most 60 runs a minute.
        There is no edit: delete and create again.
      </p>
      <div className="controls">
        <button
          type="button"
          onClick={() => {
            setNote(undefined);
            setCreating(true);
          }}
        >
          New trigger…
        </button>
        <Link to="/events">Send an event…</Link>
        {remove.error ? <ErrorNote error={remove.error} /> : null}
        {note && !remove.error ? (
          <span className="note" role="status">
            {note}
          </span>
        ) : null}
      </div>
      {creating ? (
        <TriggerForm
          onClose={() => setCreating(false)}
          onCreated={(t) => {
            setCreating(false);
            setNote(`trigger ${t.id.slice(0, 8)} created for ${t.workflow}`);
            setWarnings((t.warnings ?? []).map((w) => `${w.path}: ${w.message}`));
          }}
        />
      ) : null}
      {warnings.length > 0 ? (
        <div className="warning" role="alert" aria-label="trigger warnings">
          {warnings.map((w) => (
            <p key={w}>Warning: {w}</p>
          ))}
        </div>
      ) : null}
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.isPending ? <p aria-busy="true">Loading…</p> : null}
      {list.data && items.length === 0 ? (
        <p className="empty">
          {pageToken
            ? "No more triggers."
            : "No triggers yet. Create one with “New trigger…” or npx shoal trigger create WORKFLOW --pattern @pattern.json."}
        </p>
      ) : null}
      {items.length > 0 ? (
        <table className="list triggers">
          <thead>
            <tr>
              <th>Workflow</th>
              <th>State</th>
              <th>Event pattern</th>
              <th>Parameters</th>
              <th>Created</th>
              <th>Last triggered runs</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((t) => (
              <tr key={t.id} data-trigger={t.id}>
                <td>
                  <Link to={`/workflows/${encodeURIComponent(t.workflow)}`}>{t.workflow}</Link>
                  <div className="note mono" title={t.id}>
                    {t.id.slice(0, 8)}
                  </div>
                </td>
                <td>
                  <TriggerSwitch t={t} />
                </td>
                <td>
                  <pre className="json">{JSON.stringify(t.eventPattern, null, 2)}</pre>
                </td>
                <td>
                  {Object.keys(t.params).length > 0 ? (
                    <dl className="params">
                      {Object.entries(t.params).map(([k, v]) => (
                        <div key={k}>
                          <dt className="mono">{k}</dt>
                          <dd className="mono">{v}</dd>
                        </div>
                      ))}
                    </dl>
                  ) : (
                    <span className="note">none</span>
                  )}
                  {t.debounceSeconds > 0 ? (
                    <div className="note">debounce {t.debounceSeconds} s</div>
                  ) : null}
                </td>
                <td>
                  {formatInstant(t.createdAt)}
                  {t.lastFiredAt ? (
                    <div className="note">last fired {formatInstant(t.lastFiredAt)}</div>
                  ) : null}
                  <TriggerRefusals t={t} />
                </td>
                <td>
                  <LastRuns workflow={t.workflow} />
                </td>
                <td className="actions">
                  <Link to={testLink(t)} aria-label={`send a test event for ${t.id.slice(0, 8)}`}>
                    Test…
                  </Link>
                  <button
                    type="button"
                    aria-label={`delete trigger ${t.id.slice(0, 8)}`}
                    disabled={remove.isPending}
                    onClick={() => {
                      setNote(undefined);
                      if (window.confirm(`Delete trigger ${t.id.slice(0, 8)} of ${t.workflow}?`))
                        remove.mutate(t.id);
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {list.data?.nextToken ? (
        <p>
          <button
            type="button"
            onClick={() => {
              const next = new URLSearchParams(params);
              next.set("page", list.data?.nextToken ?? "");
              setParams(next);
            }}
          >
            Older →
          </button>
        </p>
      ) : null}
    </main>
  );
}

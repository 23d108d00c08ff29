/**
 * What starts a workflow besides a run request: its schedules (timing, zone, next fire in the
 * schedule's zone, ONLINE or OFFLINE, each linking to its page) and the event triggers that
 * name it (their EventBridge pattern, debounce, last fire). Refreshed every 30 s (next fires
 * move on).
 */
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { api, type Page } from "../../api";
import { formatInZone } from "../../model/zone-time";
import { ErrorNote } from "../ErrorNote";
import { formatInstant } from "../format";
import type { Schedule, Trigger } from "./types";

/** Triggers read to find this workflow's (the API lists them without a workflow filter). */
const TRIGGERS_READ = 200;

export function SchedulesView({ name }: { name: string }) {
  const schedules = useQuery({
    queryKey: ["schedules", "of", name],
    queryFn: () =>
      api<Page<Schedule>>(`/v1/schedules?workflow=${encodeURIComponent(name)}&limit=100`),
    refetchInterval: 30_000,
  });
  const triggers = useQuery({
    queryKey: ["triggers", "all"],
    queryFn: () => api<Page<Trigger>>(`/v1/triggers?limit=${TRIGGERS_READ}`),
    refetchInterval: 30_000,
  });
  const mine = triggers.data?.items.filter((t) => t.workflow === name);
  return (
    <section className="workflow-schedules">
      <h2>Schedules</h2>
      {schedules.error ? <ErrorNote error={schedules.error} /> : null}
      {schedules.isPending ? <p aria-busy="true">Loading schedules…</p> : null}
      {schedules.data && schedules.data.items.length === 0 ? (
        <p className="empty">
          No schedules for {name}. Create one with <code>POST /v1/schedules</code> (
          {`{"workflow": "${name}", "cron": "0 6 * * *"}`}).
        </p>
      ) : null}
      {schedules.data && schedules.data.items.length > 0 ? (
        <table className="list">
          <thead>
            <tr>
              <th>Schedule</th>
              <th>Timing</th>
              <th>State</th>
              <th>Next fire (schedule's zone)</th>
              <th>Overlap</th>
            </tr>
          </thead>
          <tbody>
            {schedules.data.items.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link className="mono" to={`/schedules/${s.id}`}>
                    {s.id.slice(0, 8)}
                  </Link>
                </td>
                <td className="mono">
                  {s.cron ?? (s.rate ? `every ${s.rate}` : `at ${s.at ?? "-"}`)}
                </td>
                <td>
                  <span className={`release release-${s.state.toLowerCase()}`}>
                    {s.state === "ONLINE" ? "● ONLINE" : "○ OFFLINE"}
                  </span>
                </td>
                <td className="mono">{formatInZone(s.nextFireTime, s.timezone)}</td>
                <td>{s.overlapPolicy}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <h2>Triggers</h2>
      {triggers.error ? <ErrorNote error={triggers.error} /> : null}
      {triggers.isPending ? <p aria-busy="true">Loading triggers…</p> : null}
      {mine && mine.length === 0 ? (
        <p className="empty">
          No event triggers start {name}. Create one with <code>POST /v1/triggers</code>.
        </p>
      ) : null}
      {mine && mine.length > 0 ? (
        <table className="list">
          <thead>
            <tr>
              <th>Trigger</th>
              <th>Event pattern</th>
              <th>Debounce</th>
              <th>Last fired</th>
            </tr>
          </thead>
          <tbody>
            {mine.map((t) => (
              <tr key={t.id}>
                <td>
                  <Link className="mono" to="/triggers">
                    {t.id.slice(0, 8)}
                  </Link>
                </td>
                <td className="mono">{JSON.stringify(t.eventPattern)}</td>
                <td>{t.debounceSeconds} s</td>
                <td>{formatInstant(t.lastFiredAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {triggers.data?.nextToken ? (
        <p className="note">Only the newest {TRIGGERS_READ} triggers were searched.</p>
      ) : null}
    </section>
  );
}

/**
 * The schedules, newest first: each one's workflow, timing, zone, next fire (on the schedule's
 * own wall clock, and how soon), its overlap and misfire policies, and an online/offline switch.
 * The workflow filter and the page live in the URL; pages follow the API's `nextToken`.
 */
import { useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import type { Schedule } from "../../../lib/cli/api-types.generated";
import { api, type Page, withQuery } from "../api";
import { ErrorNote } from "../components/ErrorNote";
import { ScheduleSwitch } from "../components/schedules/ScheduleSwitch";
import { Timing } from "../components/schedules/timing";
import { useNow } from "../components/schedules/useNow";
import { formatInZone, formatNextFire, nextPollMs } from "../model/zone-time";
import "./scheduling.css";
import { OlderLink } from "../components/OlderLink";

/** The schedules list (`/schedules?workflow=…`). */
export function SchedulesPage() {
  const [params, setParams] = useSearchParams();
  const workflow = params.get("workflow") ?? undefined;
  const query = { workflow, nextToken: params.get("page") ?? undefined, limit: "50" };
  const list = useQuery({
    queryKey: ["schedules", query],
    queryFn: () => api<Page<Schedule>>(withQuery("/v1/schedules", query)),
    // Next fire times move while a schedule is online (asked again soon after the earliest one,
    // at most every 10 s); nothing changes by itself otherwise.
    refetchInterval: (q) =>
      q.state.data?.items.some((s) => s.state === "ONLINE")
        ? nextPollMs(q.state.data.items, Date.now(), 10_000)
        : 60_000,
  });
  const now = useNow();
  const setWorkflow = (value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set("workflow", value);
    else next.delete("workflow");
    next.delete("page");
    setParams(next);
  };
  return (
    <main>
      <h1>Schedules</h1>
      <form className="filters" aria-label="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Workflow{" "}
          <input
            name="workflow"
            key={workflow ?? ""}
            defaultValue={workflow ?? ""}
            onBlur={(e) => setWorkflow(e.currentTarget.value.trim())}
            onKeyDown={(e) => e.key === "Enter" && setWorkflow(e.currentTarget.value.trim())}
          />
        </label>
      </form>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.isPending ? <p aria-busy="true">Loading…</p> : null}
      {list.data && list.data.items.length === 0 ? (
        <p className="empty">
          {workflow
            ? `No schedule of workflow ${workflow}${params.get("page") ? " on this page" : ""}.`
            : "No schedules yet."}{" "}
          Create one with <code>shoal schedule create &lt;workflow&gt; --cron "30 2 * * *"</code> or{" "}
          <code>POST /v1/schedules</code>.
        </p>
      ) : null}
      {list.data && list.data.items.length > 0 ? (
        <table className="list schedules">
          <thead>
            <tr>
              <th>Schedule</th>
              <th>Workflow</th>
              <th>Timing</th>
              <th>Zone</th>
              <th>Next fire (schedule's zone)</th>
              <th>State</th>
              <th>Overlap</th>
              <th>Misfire</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link
                    to={`/schedules/${s.id}`}
                    className="mono"
                    aria-label={`schedule ${s.id.slice(0, 8)}`}
                  >
                    {s.id.slice(0, 8)}
                  </Link>
                </td>
                <td>
                  <Link to={`/workflows/${encodeURIComponent(s.workflow)}`}>{s.workflow}</Link>
                </td>
                <td>
                  <Timing s={s} />
                </td>
                <td>{s.timezone}</td>
                <td>
                  {s.nextFireTime ? (
                    <>
                      <span className="mono">{formatInZone(s.nextFireTime, s.timezone)}</span>{" "}
                      <span className="note">{formatNextFire(s.nextFireTime, now)}</span>
                    </>
                  ) : (
                    <span className="note">
                      {s.state === "OFFLINE" ? "none while offline" : "none left"}
                    </span>
                  )}
                </td>
                <td>
                  <ScheduleSwitch s={s} />
                </td>
                <td>{s.overlapPolicy}</td>
                <td title={`late by more than ${s.misfireThresholdSeconds} s is a misfire`}>
                  {s.misfirePolicy} ({s.misfireThresholdSeconds} s)
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <OlderLink nextToken={list.data?.nextToken} />
    </main>
  );
}

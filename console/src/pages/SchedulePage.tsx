/**
 * One schedule: its settings, its online/offline switch, the preview of its next fires and its
 * fire ledger (each FIRED fire linked to its instance). Refreshed every 5 s while it is online.
 */
import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import type { Schedule } from "../../../lib/cli/api-types.generated";
import { api } from "../api";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant } from "../components/format";
import { FireLedger } from "../components/schedules/FireLedger";
import { SchedulePreview } from "../components/schedules/SchedulePreview";
import { ScheduleSwitch } from "../components/schedules/ScheduleSwitch";
import { Timing } from "../components/schedules/timing";
import { useNow } from "../components/schedules/useNow";
import { formatInZone, formatNextFire, nextPollMs } from "../model/zone-time";
import "./scheduling.css";

/** The page of a schedule (`/schedules/:id`). */
export function SchedulePage() {
  const { id = "" } = useParams();
  const sched = useQuery({
    queryKey: ["schedule", id],
    queryFn: () => api<Schedule>(`/v1/schedules/${encodeURIComponent(id)}`),
    // While online: soon after its next fire (at most every 5 s), as its ledger grows then.
    refetchInterval: (q) =>
      q.state.data?.state === "ONLINE" ? nextPollMs([q.state.data], Date.now(), 5_000) : false,
  });
  const now = useNow();
  if (sched.error)
    return (
      <main>
        <p className="crumbs">
          <Link to="/schedules">Schedules</Link>
        </p>
        <ErrorNote error={sched.error} />
      </main>
    );
  const s = sched.data;
  if (!s) return <main aria-busy="true">Loading…</main>;
  const params = Object.entries(s.params);
  return (
    <main>
      <p className="crumbs">
        <Link to="/schedules">Schedules</Link> /{" "}
        <Link to={`/schedules?workflow=${encodeURIComponent(s.workflow)}`}>{s.workflow}</Link>
      </p>
      <h1>
        Schedule of {s.workflow} <ScheduleSwitch s={s} />
      </h1>
      <div className="schedule-top">
        <dl className="facts">
          <dt>Schedule</dt>
          <dd className="mono">{s.id}</dd>
          <dt>Workflow</dt>
          <dd>
            <Link to={`/workflows/${encodeURIComponent(s.workflow)}`}>{s.workflow}</Link> (
            <Link to={`/instances?workflow=${encodeURIComponent(s.workflow)}&runType=SCHEDULE`}>
              its scheduled runs
            </Link>
            )
          </dd>
          <dt>Timing</dt>
          <dd>
            <Timing s={s} />
          </dd>
          <dt>Zone</dt>
          <dd>{s.timezone}</dd>
          <dt>Next fire</dt>
          <dd>
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
          </dd>
          {s.startTime || s.endTime ? (
            <>
              <dt>Window</dt>
              <dd>
                {formatInZone(s.startTime, s.timezone)} … {formatInZone(s.endTime, s.timezone)}
              </dd>
            </>
          ) : null}
          <dt>Overlap</dt>
          <dd>{s.overlapPolicy}</dd>
          <dt>Misfire</dt>
          <dd>
            {s.misfirePolicy}, late by more than {s.misfireThresholdSeconds} s
            {s.misfirePolicy === "FIRE_ALL" ? `, at most ${s.maxCatchup} caught up` : ""}
          </dd>
          {s.queued?.length ? (
            <>
              <dt>Queued</dt>
              <dd>
                {s.queued.length} waiting for the running run (
                {s.queued.map((t) => formatInZone(t, s.timezone)).join(", ")})
              </dd>
            </>
          ) : null}
          <dt>Priority</dt>
          <dd>{s.priority ?? "the definition's"}</dd>
          <dt>Failure strategy</dt>
          <dd>{s.failureStrategy ?? "the definition's"}</dd>
          {s.workerGroup ? (
            <>
              <dt>Worker group</dt>
              <dd>{s.workerGroup}</dd>
            </>
          ) : null}
          <dt>Parameters</dt>
          <dd>
            {params.length ? (
              <code>{params.map(([k, v]) => `${k}=${v}`).join(" ")}</code>
            ) : (
              <span className="note">none</span>
            )}
          </dd>
          <dt>Created</dt>
          <dd>{formatInstant(s.createdAt)}</dd>
          <dt>Updated</dt>
          <dd>{formatInstant(s.updatedAt)}</dd>
        </dl>
        <SchedulePreview s={s} now={now} />
      </div>
      <FireLedger s={s} now={now} />
    </main>
  );
}

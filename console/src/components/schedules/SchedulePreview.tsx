/**
 * The next N nominal fire times of a schedule (`GET /v1/schedules/{id}/preview?count=N`), on its
 * own wall clock and relative to now; N is chosen by the user and kept in the URL (`?count=`).
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useSearchParams } from "react-router";
import type { SchedulePreview as Preview, Schedule } from "../../../../lib/cli/api-types.generated";
import { api } from "../../api";
import { formatInZone, formatRelative } from "../../model/zone-time";
import { ErrorNote } from "../ErrorNote";

const COUNTS = [5, 10, 25, 50, 100];

/** The preview of a schedule's next fires, whatever its state (the API computes it either way). */
export function SchedulePreview({ s, now }: { s: Schedule; now: number }) {
  const [params, setParams] = useSearchParams();
  const asked = Number(params.get("count"));
  const count = COUNTS.includes(asked) ? asked : 5;
  const preview = useQuery({
    // Asked again when the schedule moves on (each fire changes nextFireTime), never on a timer.
    queryKey: ["preview", s.id, count, s.nextFireTime, s.updatedAt],
    queryFn: () => api<Preview>(`/v1/schedules/${encodeURIComponent(s.id)}/preview?count=${count}`),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="preview" aria-label="preview">
      <h2>
        Next fires{" "}
        <label className="note">
          show{" "}
          <select
            aria-label="fires shown"
            value={count}
            onChange={(e) => {
              const next = new URLSearchParams(params);
              next.set("count", e.currentTarget.value);
              setParams(next, { replace: true });
            }}
          >
            {COUNTS.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
      </h2>
      {s.state === "OFFLINE" ? (
        <p className="note">Offline: these are the times it would fire once online again.</p>
      ) : null}
      {preview.error ? <ErrorNote error={preview.error} /> : null}
      {preview.data && preview.data.items.length === 0 ? (
        <p className="empty">No fire left: its timing has ended.</p>
      ) : null}
      <ol className="preview-times">
        {preview.data?.items.map((t) => (
          <li key={t}>
            <span className="mono">{formatInZone(t, s.timezone)}</span>{" "}
            <span className="note">{formatRelative(t, now)}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}

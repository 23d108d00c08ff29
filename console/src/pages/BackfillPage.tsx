/**
 * One backfill: its settings and progress, the controls its state allows (pause, resume,
 * cancel; confirmed, a 409 shown as the API's message) and its instances. Refreshed every 2 s
 * while it runs or still counts running instances.
 */
import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import type { Backfill } from "../../../lib/cli/api-types.generated";
import { api } from "../api";
import { BackfillControls } from "../components/backfills/BackfillControls";
import { BackfillInstances } from "../components/backfills/BackfillInstances";
import { BackfillProgress } from "../components/backfills/BackfillProgress";
import { BackfillStateBadge, backfillLive } from "../components/backfills/BackfillStateBadge";
import { formatMode, formatRange } from "../components/backfills/describe";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant } from "../components/format";
import "./scheduling.css";

/** The page of a backfill (`/backfills/:id`). */
export function BackfillPage() {
  const { id = "" } = useParams();
  const bf = useQuery({
    queryKey: ["backfill", id],
    queryFn: () => api<Backfill>(`/v1/backfills/${encodeURIComponent(id)}`),
    refetchInterval: (q) => (q.state.data && backfillLive(q.state.data) ? 2_000 : false),
  });
  if (bf.error)
    return (
      <main>
        <p className="crumbs">
          <Link to="/backfills">Backfills</Link>
        </p>
        <ErrorNote error={bf.error} />
      </main>
    );
  const b = bf.data;
  if (!b) return <main aria-busy="true">Loading…</main>;
  return (
    <main>
      <p className="crumbs">
        <Link to="/backfills">Backfills</Link> /{" "}
        <Link to={`/backfills?workflow=${encodeURIComponent(b.workflow)}`}>{b.workflow}</Link>
      </p>
      <h1>
        Backfill of {b.workflow} <BackfillStateBadge state={b.state} />
      </h1>
      <dl className="facts">
        <dt>Backfill</dt>
        <dd className="mono">{b.id}</dd>
        <dt>Workflow</dt>
        <dd>
          <Link to={`/workflows/${encodeURIComponent(b.workflow)}`}>{b.workflow}</Link>
        </dd>
        <dt>Mode</dt>
        <dd>
          {formatMode(b)}
          {b.mode === "SERIAL" ? " (one run at a time)" : " at once"}
        </dd>
        <dt>Priority</dt>
        <dd>{b.priority}</dd>
        <dt>Nominal times</dt>
        <dd className="mono">
          {formatRange(b)} <span className="note">(in run order)</span>
        </dd>
        <dt>Zone</dt>
        <dd>{b.timezone ?? "the workflow's (times shown in UTC)"}</dd>
        <dt>Progress</dt>
        <dd>
          <BackfillProgress b={b} wide />
        </dd>
        <dt>Created</dt>
        <dd>{formatInstant(b.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{formatInstant(b.updatedAt)}</dd>
      </dl>
      <BackfillControls b={b} />
      <BackfillInstances b={b} live={backfillLive(b)} />
    </main>
  );
}

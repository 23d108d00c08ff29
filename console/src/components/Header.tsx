/** The console's header: where it is, the API endpoint, Shoal's version and a health dot. */
import { useQuery } from "@tanstack/react-query";
import { NavLink } from "react-router";
import type { Health } from "../api";

/** `/v1/health` answers 503 with the same body when a part is down: both are an answer. */
async function health(): Promise<Health> {
  const res = await fetch("/v1/health");
  return (await res.json()) as Health;
}

export function Header() {
  const h = useQuery({ queryKey: ["health"], queryFn: health, refetchInterval: 10_000 });
  const status = h.isError ? "unreachable" : (h.data?.status ?? "…");
  const parts = Object.entries(h.data?.parts ?? {})
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ");
  return (
    <header className="top">
      <NavLink to="/" className="brand">
        Shoal
      </NavLink>
      <nav aria-label="main">
        <NavLink to="/instances">Instances</NavLink>
        <NavLink to="/workflows">Workflows</NavLink>
        <NavLink to="/schedules">Schedules</NavLink>
        <NavLink to="/backfills">Backfills</NavLink>
        <NavLink to="/triggers">Triggers</NavLink>
        <NavLink to="/task-groups">Task groups</NavLink>
        <NavLink to="/events">Events</NavLink>
      </nav>
      <span className="endpoint" title="the API this console talks to">
        {window.location.origin}/v1
      </span>
      <span className="version">{h.data ? `v${h.data.version}` : ""}</span>
      <span
        className={`health health-${status}`}
        role="status"
        title={parts ? `${status} (${parts})` : status}
      >
        <span aria-hidden="true">●</span> {status}
      </span>
    </header>
  );
}

/** The console's header: where it is, the API endpoint, Shoal's version and a health dot. */
import { useQuery } from "@tanstack/react-query";
import { NavLink } from "react-router";
import type { Health } from "../api";

/** What the health dot shows, and the API the console talks to. */
interface HealthView {
  health?: Health;
  /** The deployed API's URL when `shoal console` proxies to it (header `x-shoal-endpoint`). */
  endpoint?: string;
}

/**
 * `/v1/health` answers 503 with the same body when a part is down: both are an answer. Anything
 * else (the proxy's 401/502 JSON, an HTML error page) means the API is not reachable.
 */
async function health(): Promise<HealthView> {
  const res = await fetch("/v1/health");
  const endpoint = res.headers.get("x-shoal-endpoint") ?? undefined;
  const body = (await res.json().catch(() => undefined)) as Health | undefined;
  if (!body || typeof body.status !== "string") throw new Error(`HTTP ${res.status}`);
  return { health: body, ...(endpoint ? { endpoint } : {}) };
}

export function Header() {
  const h = useQuery({ queryKey: ["health"], queryFn: health, refetchInterval: 10_000 });
  const status = h.isError ? "unreachable" : (h.data?.health?.status ?? "…");
  const parts = Object.entries(h.data?.health?.parts ?? {})
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
        {h.data?.endpoint ?? `${window.location.origin}/v1`}
      </span>
      <span className="version">{h.data?.health ? `v${h.data.health.version}` : ""}</span>
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

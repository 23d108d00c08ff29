/**
 * A collapsible "Parameters as resolved" section: the task's parameters as the dispatcher
 * resolved them for the chosen attempt (secret-like ones `****`), the references left
 * unresolved, and what it runs (the SHELL command, the HTTP request…), from
 * `GET /v1/instances/{id}/tasks/{code}/render?attempt=N`. Read only once opened.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { TaskRendering } from "../../../../lib/cli/api-types.generated";
import { api, withQuery } from "../../api";
import { ErrorNote } from "../ErrorNote";

export function ResolvedParams(props: { base: string; attempt: number; live: boolean }) {
  const [open, setOpen] = useState(false);
  const render = useQuery({
    queryKey: ["render", props.base, props.attempt],
    queryFn: () =>
      api<TaskRendering>(withQuery(`${props.base}/render`, { attempt: String(props.attempt) })),
    enabled: open,
    // Upstream tasks set OUT parameters while the instance runs.
    refetchInterval: open && props.live ? 5_000 : false,
  });
  const r = render.data;
  return (
    <details
      className="resolved"
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>Parameters as resolved</summary>
      {render.error ? <ErrorNote error={render.error} /> : null}
      {open && !r && !render.error ? <p aria-busy="true">Loading…</p> : null}
      {r ? (
        <>
          <p className="note">
            Attempt {r.attempt}, base time {r.baseTime} ({r.timezone})
          </p>
          {Object.keys(r.params).length === 0 ? (
            <p className="note">No parameters.</p>
          ) : (
            <table className="list params" aria-label="resolved parameters">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Value</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(r.params).map(([k, v]) => (
                  <tr key={k}>
                    <td className="mono">{k}</td>
                    <td className="mono">{v}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {r.unresolved.length > 0 ? (
            <p className="note">
              Left as written (no such parameter):{" "}
              <span className="mono">{r.unresolved.map((u) => `\${${u}}`).join(" ")}</span>
            </p>
          ) : null}
          {r.error ? <p className="error">Cannot be rendered: {r.error}</p> : null}
          {r.hidden ? <p className="note">Not shown: {r.hidden}</p> : null}
          {r.rendered ? (
            <>
              <h4>{r.rendered.type === "SHELL" ? "Command" : "What it runs or decides"}</h4>
              <pre className="rendered">
                {r.rendered.type === "SHELL"
                  ? r.rendered.command
                  : JSON.stringify(r.rendered, null, 2)}
              </pre>
            </>
          ) : null}
        </>
      ) : null}
    </details>
  );
}

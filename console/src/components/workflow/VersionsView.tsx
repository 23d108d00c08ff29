/**
 * A workflow's versions, newest first, each with when it was stored and a View link (the
 * page's `?version=N`, which the graph and YAML follow), and a unified diff between two chosen
 * versions (`?from=&to=` in the URL) of their YAML: added lines marked `+` in green, removed
 * lines `-` in red, so the marks carry the meaning without the colours.
 */
import { useQueries } from "@tanstack/react-query";
import { useMemo } from "react";
import { Link, useSearchParams } from "react-router";
import { api } from "../../api";
import { ErrorNote } from "../ErrorNote";
import { formatInstant } from "../format";
import { definitionYaml } from "./definition-yaml";
import { unifiedRows } from "./line-diff";
import type { WorkflowDetail } from "./types";
import { useVersion } from "./use-version";

/** Versions listed with their dates (each is one request, cached); older ones stay choosable. */
const LISTED = 20;

export function VersionsView(props: { name: string; latest: number; viewing: number }) {
  const [params, setParams] = useSearchParams();
  const versions = Array.from({ length: props.latest }, (_, i) => props.latest - i);
  const listed = versions.slice(0, LISTED);
  const details = useQueries({
    queries: listed.map((v) => ({
      queryKey: ["definition", props.name, v],
      queryFn: () =>
        api<WorkflowDetail>(`/v1/workflows/${encodeURIComponent(props.name)}?version=${v}`),
      staleTime: Number.POSITIVE_INFINITY,
    })),
  });
  const pick = (key: string, fallback: number) => {
    const n = Number(params.get(key));
    return Number.isInteger(n) && n >= 1 && n <= props.latest ? n : fallback;
  };
  const to = pick("to", props.latest);
  const from = pick("from", Math.max(1, to - 1));
  const setPair = (key: "from" | "to", v: string) => {
    const next = new URLSearchParams(params);
    next.set(key, v);
    setParams(next);
  };
  const link = (v: number) => {
    const next = new URLSearchParams(params);
    next.set("version", String(v));
    next.set("view", "graph");
    return `?${next}`;
  };
  return (
    <section className="versions">
      <table className="list">
        <thead>
          <tr>
            <th>Version</th>
            <th>Stored</th>
            <th>Tasks</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {listed.map((v, i) => {
            const d = details[i];
            return (
              <tr key={v} className={v === props.viewing ? "chosen" : ""}>
                <td>
                  {v}
                  {v === props.latest ? " (latest)" : ""}
                </td>
                <td>{d?.error ? "not readable" : formatInstant(d?.data?.createdAt)}</td>
                <td>{d?.data?.tasks.length ?? ""}</td>
                <td>
                  <Link to={link(v)} aria-label={`view version ${v}`}>
                    View
                  </Link>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {props.latest > LISTED ? (
        <p className="note">
          Versions 1 to {props.latest - LISTED} are older: choose them in the diff below or with{" "}
          <code>?version=N</code>.
        </p>
      ) : null}
      <h2>Diff</h2>
      <div className="controls">
        <VersionSelect
          label="From version"
          value={from}
          versions={versions}
          onChange={(v) => setPair("from", v)}
        />
        <VersionSelect
          label="To version"
          value={to}
          versions={versions}
          onChange={(v) => setPair("to", v)}
        />
      </div>
      <VersionDiff name={props.name} from={from} to={to} />
    </section>
  );
}

function VersionSelect(props: {
  label: string;
  value: number;
  versions: number[];
  onChange: (v: string) => void;
}) {
  return (
    <label>
      {props.label}{" "}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.versions.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The unified diff of version `from`'s YAML to version `to`'s. */
function VersionDiff(props: { name: string; from: number; to: number }) {
  const a = useVersion(props.name, props.from);
  const b = useVersion(props.name, props.to);
  const rows = useMemo(
    () =>
      a.data && b.data ? unifiedRows(definitionYaml(a.data), definitionYaml(b.data)) : undefined,
    [a.data, b.data],
  );
  if (a.error || b.error) return <ErrorNote error={a.error ?? b.error} />;
  if (!rows) return <p aria-busy="true">Loading both versions…</p>;
  if (rows.length === 0)
    return (
      <p className="empty">
        Versions {props.from} and {props.to} define the same workflow.
      </p>
    );
  const added = rows.filter((r) => r.mark === "+").length;
  const removed = rows.filter((r) => r.mark === "-").length;
  return (
    <figure className="diff" aria-label={`diff of version ${props.from} to ${props.to}`}>
      <figcaption>
        v{props.from} → v{props.to}: {added} line{added === 1 ? "" : "s"} added (+), {removed}{" "}
        removed (-)
      </figcaption>
      <pre>
        {rows.map((r, i) => (
          <span
            // biome-ignore lint/suspicious/noArrayIndexKey: rows of a diff have no identity beyond their place
            key={i}
            className={`diff-row diff-${r.mark === "+" ? "add" : r.mark === "-" ? "del" : r.mark === "…" ? "gap" : "same"}`}
          >
            {`${r.mark} ${r.text}\n`}
          </span>
        ))}
      </pre>
    </figure>
  );
}

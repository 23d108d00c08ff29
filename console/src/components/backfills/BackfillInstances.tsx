/**
 * A backfill's instances, read with the instance list's own filters:
 * `GET /v1/instances?workflow=W&runType=BACKFILL&scheduledAfter=first&scheduledBefore=last+1ms`
 * (the API has no backfill filter, so another backfill of the same workflow over the same times
 * shows too). Newest first, a page of 50 at a time ("More"); refreshed every 3 s while live.
 */
import { useInfiniteQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { Link } from "react-router";
import type { Backfill } from "../../../../lib/cli/api-types.generated";
import { api, type InstanceSummary, type Page, withQuery } from "../../api";
import { formatInZone } from "../../model/zone-time";
import { ErrorNote } from "../ErrorNote";
import { formatInstant, formatSpan } from "../format";
import { StateBadge } from "../StateBadge";

const FINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);
/** Empty filtered pages followed by themselves before the user is asked to. */
const AUTO_PAGES = 10;

/** The filters of the instance list that select a backfill's runs. */
export function backfillInstanceFilter(b: Backfill): Record<string, string | undefined> {
  const times = [b.firstTime, b.lastTime].filter((t): t is string => !!t).map(Date.parse);
  return {
    workflow: b.workflow,
    runType: "BACKFILL",
    ...(times.length
      ? {
          scheduledAfter: new Date(Math.min(...times)).toISOString(),
          // scheduledBefore is exclusive: one millisecond past the last nominal time.
          scheduledBefore: new Date(Math.max(...times) + 1).toISOString(),
        }
      : {}),
  };
}

/** The list of a backfill's instances; `live` while the backfill can still change. */
export function BackfillInstances({ b, live }: { b: Backfill; live: boolean }) {
  const filter = backfillInstanceFilter(b);
  const list = useInfiniteQuery({
    queryKey: ["backfill-instances", b.id, filter],
    queryFn: ({ pageParam }) =>
      api<Page<InstanceSummary>>(
        withQuery("/v1/instances", { ...filter, limit: "50", nextToken: pageParam }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextToken,
    refetchInterval: (q) =>
      live || q.state.data?.pages.some((p) => p.items.some((i) => !FINAL.has(i.state)))
        ? 3_000
        : false,
  });
  const pages = list.data?.pages ?? [];
  const items = pages.flatMap((p) => p.items);
  const lastEmpty = pages.length > 0 && pages[pages.length - 1]?.items.length === 0;
  // The list filters each page the store reads, so a page may be empty with more after it.
  useEffect(() => {
    if (lastEmpty && list.hasNextPage && !list.isFetchingNextPage && pages.length < AUTO_PAGES)
      void list.fetchNextPage();
  }, [lastEmpty, list.hasNextPage, list.isFetchingNextPage, pages.length, list.fetchNextPage]);
  const zone = b.timezone ?? "UTC";
  return (
    <section className="bf-instances" aria-label="instances of the backfill">
      <h2>
        Instances{" "}
        <Link className="note" to={`/instances?${new URLSearchParams(filterEntries(filter))}`}>
          open in the instances list
        </Link>
      </h2>
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.isPending ? <p aria-busy="true">Loading…</p> : null}
      {list.data && items.length === 0 && !list.hasNextPage ? (
        <p className="empty">No instance started yet.</p>
      ) : null}
      {items.length > 0 ? (
        <table className="list">
          <thead>
            <tr>
              <th>Instance</th>
              <th>State</th>
              <th>Schedule time ({zone})</th>
              <th>Started</th>
              <th>Duration</th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr key={i.instanceId}>
                <td>
                  <Link to={`/instances/${i.instanceId}`} className="mono">
                    {i.instanceId.slice(0, 8)}
                  </Link>
                </td>
                <td>
                  <StateBadge state={i.state} />
                </td>
                <td className="mono">{formatInZone(i.scheduleTime, zone)}</td>
                <td>{formatInstant(i.startedAt)}</td>
                <td>{formatSpan(i.startedAt, i.endedAt, Date.now())}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {list.hasNextPage ? (
        <p>
          <button
            type="button"
            disabled={list.isFetchingNextPage}
            onClick={() => void list.fetchNextPage()}
          >
            More
          </button>
        </p>
      ) : null}
    </section>
  );
}

/** The filter's set entries, for a query string. */
function filterEntries(f: Record<string, string | undefined>): [string, string][] {
  return Object.entries(f).filter((e): e is [string, string] => !!e[1]);
}

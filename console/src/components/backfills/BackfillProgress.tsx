/**
 * A backfill's progress: a bar of stacked segments (done, running, failed, pending, each a
 * share of the total) and the counts in words beside it, so it reads without colour.
 */
import type { Backfill } from "../../../../lib/cli/api-types.generated";

const PARTS = ["done", "running", "failed", "pending"] as const;

/** The stacked bar and `3 done · 1 running · 0 failed · 2 pending of 6`. */
export function BackfillProgress({ b, wide = false }: { b: Backfill; wide?: boolean }) {
  const pct = (n: number) => `${b.total ? (100 * n) / b.total : 0}%`;
  const text = `${b.done} done · ${b.running} running · ${b.failed} failed · ${b.pending} pending of ${b.total}`;
  return (
    <span className={wide ? "bf-progress wide" : "bf-progress"}>
      <span
        className="bf-bar"
        role="img"
        aria-label={`${b.done + b.failed} of ${b.total} ran: ${text}`}
      >
        {PARTS.map((p) =>
          b[p] > 0 ? (
            <span
              key={p}
              className={`bf-seg bf-${p}`}
              style={{ width: pct(b[p]) }}
              title={`${b[p]} ${p}`}
            />
          ) : null,
        )}
      </span>
      <span className="bf-text">{text}</span>
    </span>
  );
}

/** A task group's slots in use: a bar with "3 / 5" beside it (the text carries the meaning). */

/**
 * Shows `used` of `capacity` slots. `used` may exceed `capacity` for a while after the capacity
 * was lowered: the bar is then full and marked "over".
 */
export function UsageBar(props: { used: number; capacity: number }) {
  const { used, capacity } = props;
  const pct = capacity > 0 ? Math.min(100, (100 * used) / capacity) : 0;
  const tone = used > capacity ? "over" : used === capacity && used > 0 ? "full" : "ok";
  return (
    <span className={`usage usage-${tone}`} title={`${used} of ${capacity} slots in use`}>
      <span className="bar" aria-hidden="true">
        <span className="fill" style={{ width: `${pct}%` }} />
      </span>
      <span>
        {used} / {capacity}
        {tone === "over" ? " (over)" : tone === "full" ? " (full)" : ""}
      </span>
    </span>
  );
}

/** A backfill's mode and range in words, as its list and its page show them. */
import type { Backfill } from "../../../../lib/cli/api-types.generated";
import { formatInZone } from "../../model/zone-time";

/** `SERIAL` or `PARALLEL ×3`. */
export function formatMode(b: Backfill): string {
  return b.mode === "PARALLEL" ? `PARALLEL ×${b.parallelism}` : "SERIAL";
}

/** The first … last nominal time in run order, in the backfill's zone (else UTC). */
export function formatRange(b: Backfill): string {
  if (!b.firstTime) return "-";
  const zone = b.timezone ?? "UTC";
  if (b.firstTime === b.lastTime) return formatInZone(b.firstTime, zone);
  return `${formatInZone(b.firstTime, zone)} … ${formatInZone(b.lastTime, zone)}`;
}

/** A schedule's timing as the API names it: `cron`, `rate` or `at`, with its expression. */
import type { Schedule } from "../../../../lib/cli/api-types.generated";
import { formatInZone } from "../../model/zone-time";

/** `cron 30 2 * * *`, `rate 5 seconds` or `at 2026-12-24 18:00:00 +00:00` (in the schedule's zone). */
export function Timing({ s }: { s: Schedule }) {
  if (s.cron)
    return (
      <span>
        cron <code>{s.cron}</code>
      </span>
    );
  if (s.rate)
    return (
      <span>
        rate <code>{s.rate}</code>
      </span>
    );
  return (
    <span>
      at <code>{formatInZone(s.at, s.timezone)}</code>
    </span>
  );
}

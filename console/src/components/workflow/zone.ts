/** Instants shown in a named IANA zone (a schedule's), for the workflow pages. */

/** `2026-11-25 06:00 Europe/Paris` for an ISO instant in `zone`; `-` for none. */
export function formatInZone(iso: string | undefined, zone: string): string {
  if (!iso) return "-";
  try {
    const parts = new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    }).formatToParts(new Date(iso));
    const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
    return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}:${get("second")} ${zone}`;
  } catch {
    // A zone this browser does not know: the instant in UTC rather than nothing.
    return `${iso.replace("T", " ").replace(/\.\d+Z$/, "Z")}`;
  }
}

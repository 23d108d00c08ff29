/**
 * Which time zone names Shoal accepts (IANA `Region/City`, UTC, GMT) and, for a refused one,
 * what was likely meant. Pure: Intl and luxon's zone data only.
 */
import { IANAZone } from "luxon";

/**
 * Whether `name` is accepted as a time zone in a definition or request: `UTC`, `GMT`, or a
 * `Region/City` name (`Etc/…` included) that Intl knows (`Europe/Paris`, `Etc/GMT+5`).
 * Abbreviations and legacy aliases are refused even though Intl knows many of them, because
 * they do not mean what a reader expects: `BST` is Asia/Dhaka (+06:00, Java's Bangladesh
 * Standard Time), not British Summer Time; `EST` is America/Panama (no DST); `IST`
 * Asia/Calcutta. Offsets such as "+02:00" are refused too. {@link zoneSuggestion} names the zone
 * meant. Zones stored before this rule still compute ({@link zonedBase} takes any Intl zone).
 */
export function isTimeZone(name: string): boolean {
  if (name === "UTC" || name === "GMT") return true;
  return /^[A-Za-z][^/]*\/./.test(name) && IANAZone.isValidZone(name);
}

/**
 * The IANA zones meant by common abbreviations and legacy names (upper-case keys), as text
 * for "did you mean …?". Where an abbreviation has two common meanings, both.
 */
const ZONE_SUGGESTIONS: Readonly<Record<string, string>> = {
  UTC: "UTC",
  GMT: "GMT",
  Z: "UTC",
  ZULU: "UTC",
  UCT: "UTC",
  UNIVERSAL: "UTC",
  GREENWICH: "UTC",
  GMT0: "UTC",
  "GMT+0": "UTC",
  "GMT-0": "UTC",
  BST: "Europe/London",
  GB: "Europe/London",
  "GB-EIRE": "Europe/London",
  IST: "Asia/Kolkata (India) or Europe/Dublin (Ireland)",
  WET: "Europe/Lisbon",
  WEST: "Europe/Lisbon",
  CET: "Europe/Paris (or another city of the zone: Europe/Berlin, Europe/Madrid, …)",
  CEST: "Europe/Paris (or another city of the zone: Europe/Berlin, Europe/Madrid, …)",
  MET: "Europe/Paris (or another city of the zone: Europe/Berlin, Europe/Madrid, …)",
  MEST: "Europe/Paris (or another city of the zone: Europe/Berlin, Europe/Madrid, …)",
  ECT: "Europe/Paris (or another city of the zone: Europe/Berlin, Europe/Madrid, …)",
  EET: "Europe/Athens (or another city of the zone: Europe/Helsinki, Europe/Bucharest, …)",
  EEST: "Europe/Athens (or another city of the zone: Europe/Helsinki, Europe/Bucharest, …)",
  MSK: "Europe/Moscow",
  "W-SU": "Europe/Moscow",
  EST: "America/New_York (America/Panama if the zone keeps no daylight saving time)",
  EDT: "America/New_York",
  EST5EDT: "America/New_York",
  CST: "America/Chicago (or Asia/Shanghai for China Standard Time)",
  CDT: "America/Chicago",
  CST6CDT: "America/Chicago",
  MST: "America/Denver (America/Phoenix if the zone keeps no daylight saving time)",
  MDT: "America/Denver",
  MST7MDT: "America/Denver",
  PST: "America/Los_Angeles",
  PDT: "America/Los_Angeles",
  PST8PDT: "America/Los_Angeles",
  AKST: "America/Anchorage",
  AKDT: "America/Anchorage",
  HST: "Pacific/Honolulu",
  AST: "America/Halifax (Atlantic) or Asia/Riyadh (Arabia)",
  ADT: "America/Halifax",
  NST: "America/St_Johns",
  NDT: "America/St_Johns",
  BRT: "America/Sao_Paulo",
  ART: "America/Argentina/Buenos_Aires",
  JST: "Asia/Tokyo",
  KST: "Asia/Seoul",
  ROK: "Asia/Seoul",
  PRC: "Asia/Shanghai",
  ROC: "Asia/Taipei",
  HKT: "Asia/Hong_Kong",
  SGT: "Asia/Singapore",
  PKT: "Asia/Karachi",
  AEST: "Australia/Sydney",
  AEDT: "Australia/Sydney",
  ACST: "Australia/Adelaide",
  ACDT: "Australia/Adelaide",
  AWST: "Australia/Perth",
  NZ: "Pacific/Auckland",
  NZST: "Pacific/Auckland",
  NZDT: "Pacific/Auckland",
  SAST: "Africa/Johannesburg",
  CAT: "Africa/Maputo",
  EAT: "Africa/Nairobi",
  WAT: "Africa/Lagos",
};

/**
 * What `name` (refused by {@link isTimeZone}) most likely means, as a clause to append to the
 * refusal ("'BST' is an abbreviation, …; did you mean Europe/London?"), or undefined. Known
 * abbreviations come from a fixed table; another name Intl knows without a `/` (a legacy alias
 * such as `Japan`) gets Intl's own canonical zone, unless it is all upper case (an abbreviation
 * whose Intl meaning is likely not the one meant).
 */
export function zoneSuggestion(name: string): string | undefined {
  const known = IANAZone.isValidZone(name) ? canonicalZone(name) : undefined;
  const meant = ZONE_SUGGESTIONS[name.toUpperCase()];
  if (meant !== undefined) {
    // Said when it explains the refusal: Intl's meaning is not the one suggested.
    const reads = known && !meant.startsWith(known) ? ` (Intl reads it as ${known})` : "";
    if (meant === name.toUpperCase()) return `did you mean ${meant}?`;
    const what = /^[A-Z]{2,5}$/.test(name) ? "an abbreviation" : "not a zone name";
    return `'${name}' is ${what}${reads}; did you mean ${meant}?`;
  }
  if (known?.includes("/") && name !== name.toUpperCase()) {
    return `'${name}' is a legacy alias; did you mean ${known}?`;
  }
  return undefined;
}

/** Intl's canonical name of a zone it knows (`Japan` → Asia/Tokyo). */
function canonicalZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * Why `name` cannot be a time zone (for a 400 naming the field `timezone`), or undefined when
 * {@link isTimeZone} accepts it: the rule, and what was likely meant ({@link zoneSuggestion}).
 */
export function timeZoneProblem(name: string): string | undefined {
  if (isTimeZone(name)) return undefined;
  const hint = zoneSuggestion(name);
  return `must be an IANA time zone name such as Europe/Paris or UTC${hint ? `: ${hint}` : ""}`;
}

/** The scheduling pages' time arithmetic: a schedule's wall clock, relative times, lateness. */
import { describe, expect, it } from "vitest";
import {
  formatInZone,
  formatLateness,
  formatNextFire,
  formatRelative,
  instantToWall,
  nextPollMs,
  wallToInstant,
} from "../../console/src/model/zone-time.js";

describe("times on a schedule's wall clock", () => {
  it("formats an instant in the schedule's zone with its offset", () => {
    expect(formatInZone("2026-11-22T07:30:00.000Z", "America/New_York")).toBe(
      "2026-11-22 02:30:00 -05:00",
    );
    expect(formatInZone("2026-07-01T00:00:00.000Z", "Europe/Paris")).toBe(
      "2026-07-01 02:00:00 +02:00",
    );
    expect(formatInZone("2026-11-25T05:34:33.000Z", "Asia/Kolkata")).toBe(
      "2026-11-25 11:04:33 +05:30",
    );
    expect(formatInZone("2026-11-25T05:34:33.000Z", "UTC")).toBe("2026-11-25 05:34:33 +00:00");
    expect(formatInZone(undefined, "UTC")).toBe("-");
    // An unknown zone falls back to UTC rather than breaking the page.
    expect(formatInZone("2026-11-25T05:34:33.000Z", "Mars/Base")).toBe(
      "2026-11-25 05:34:33 +00:00",
    );
  });

  it("turns a wall-clock value back into the instant, and round-trips", () => {
    expect(wallToInstant("2026-11-22T02:30", "America/New_York")).toBe("2026-11-22T07:30:00.000Z");
    expect(wallToInstant("2026-07-01T02:00", "Europe/Paris")).toBe("2026-07-01T00:00:00.000Z");
    expect(instantToWall("2026-11-22T07:30:00.000Z", "America/New_York")).toBe("2026-11-22T02:30");
    // Across a DST change (Paris, 2026-03-29 02:00 → 03:00): the hour after is +02:00.
    expect(wallToInstant("2026-03-29T03:30", "Europe/Paris")).toBe("2026-03-29T01:30:00.000Z");
    expect(wallToInstant("2026-03-29T01:30", "Europe/Paris")).toBe("2026-03-29T00:30:00.000Z");
    // In the gap (02:30 does not exist): the offset before it; in the fold (Oct 25, 02:30
    // happens twice): the first.
    expect(wallToInstant("2026-03-29T02:30", "Europe/Paris")).toBe("2026-03-29T01:30:00.000Z");
    expect(wallToInstant("2026-10-25T02:30", "Europe/Paris")).toBe("2026-10-25T00:30:00.000Z");
    expect(wallToInstant("", "UTC")).toBe("");
    expect(wallToInstant("nonsense", "UTC")).toBe("");
  });
});

describe("relative times and lateness", () => {
  const now = Date.parse("2026-11-25T06:00:00.000Z");
  it("says how far an instant is from now", () => {
    expect(formatRelative("2026-11-25T06:03:10.000Z", now)).toBe("in 3 min");
    expect(formatRelative("2026-11-25T06:00:12.400Z", now)).toBe("in 12 s");
    expect(formatRelative("2026-11-25T01:00:00.000Z", now)).toBe("5 h ago");
    expect(formatRelative("2026-11-27T07:00:00.000Z", now)).toBe("in 2 d");
    expect(formatRelative("2026-11-25T06:00:00.300Z", now)).toBe("now");
  });

  it("says a next fire whose time passed is due, and polls soon after the earliest", () => {
    expect(formatNextFire("2026-11-25T06:00:05.000Z", now)).toBe("in 5 s");
    expect(formatNextFire("2026-11-25T05:59:58.000Z", now)).toBe("due");
    const online = (t: string) => ({ state: "ONLINE", nextFireTime: t });
    expect(nextPollMs([online("2026-11-25T06:00:04.000Z")], now, 10_000)).toBe(5_000);
    expect(nextPollMs([online("2026-11-25T05:59:00.000Z")], now, 10_000)).toBe(2_000);
    expect(nextPollMs([online("2026-11-25T07:00:00.000Z")], now, 10_000)).toBe(10_000);
    expect(nextPollMs([{ state: "OFFLINE" }], now, 10_000)).toBe(10_000);
  });

  it("says a fire's lateness in words", () => {
    expect(formatLateness(0)).toBe("on time");
    expect(formatLateness(40)).toBe("40 ms late");
    expect(formatLateness(770)).toBe("0.8 s late");
    expect(formatLateness(12_340)).toBe("12.3 s late");
    expect(formatLateness(125_000)).toBe("2 min 05 s late");
  });
});

/**
 * Polling that backs off while nothing changes: every 3 s right after a change, every 10 s once
 * nothing changed for 30 s, every 30 s after 2 min. An idle page then costs 2 requests a minute.
 */
import { useRef } from "react";

/** Intervals in ms by how long (ms) the answer has stayed the same, longest quiet first. */
const STEPS: [quietFor: number, every: number][] = [
  [120_000, 30_000],
  [30_000, 10_000],
  [0, 3_000],
];

/**
 * A `refetchInterval` for TanStack Query that backs off while `fingerprint(data)` stays the same.
 * @returns `interval` (latest data → next interval in ms; pure in time, since TanStack Query may
 *   call it several times per fetch) and `reset` (after the user changed something: fast again).
 */
export function useBackoffInterval<T>(fingerprint: (data: T | undefined) => string) {
  const seen = useRef<{ key: string; since: number }>({ key: "", since: Date.now() });
  const interval = (data: T | undefined): number => {
    const key = fingerprint(data);
    const now = Date.now();
    if (key !== seen.current.key) seen.current = { key, since: now };
    const quiet = now - seen.current.since;
    for (const [quietFor, every] of STEPS) if (quiet >= quietFor) return every;
    return 3_000;
  };
  const reset = () => {
    seen.current = { ...seen.current, since: Date.now() };
  };
  return { interval, reset };
}

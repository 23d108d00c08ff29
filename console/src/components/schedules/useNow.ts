/** The current time, refreshed every `everyMs` (for "in 3 min" texts between two polls). */
import { useEffect, useState } from "react";

/** `Date.now()`, re-rendering the caller every `everyMs` milliseconds while it is mounted. */
export function useNow(everyMs = 1_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}

/** Polls until `check` returns a value (not undefined/false) or the deadline passes. */
export async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  opts: {
    timeoutMs?: number;
    intervalMs?: number;
    /** What is awaited, for the timeout's message; a function is called then (to show output so far). */
    what?: string | (() => string);
  } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${(typeof opts.what === "function" ? opts.what() : opts.what) ?? "condition"}${last ? `: ${String(last)}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}

/**
 * Retries assertions until they hold or 10 s pass: for reads of eventually consistent indexes
 * (DynamoDB GSIs; immediate on dynalite).
 */
export function eventually(check: () => Promise<void>): Promise<true> {
  return until(
    async () => {
      await check();
      return true as const;
    },
    { timeoutMs: 10_000, what: "index to settle" },
  );
}

/** Runs `fn` over `items` with at most `limit` calls under way at once. */
export async function mapLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (t: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const run = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
}

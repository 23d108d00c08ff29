/**
 * Natural batching: an item is sent at once while fewer than `maxInFlight` sends are under way;
 * otherwise it waits and leaves with the next send, in batches of up to `maxBatch`. No timer, so
 * a lone item pays no latency, and under load requests carry full batches.
 */
export class Batcher<T> {
  private pending: Array<{ item: T; resolve: () => void; reject: (e: unknown) => void }> = [];
  private inFlight = 0;

  constructor(
    private readonly send: (items: T[]) => Promise<void>,
    private readonly opts: { maxBatch: number; maxInFlight: number },
  ) {}

  /** Resolves when the batch holding `item` was sent; rejects with that batch's error. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.pending.length > 0) {
      const batch = this.pending.splice(0, this.opts.maxBatch);
      this.inFlight++;
      this.send(batch.map((b) => b.item))
        .then(
          () => {
            for (const b of batch) b.resolve();
          },
          (e) => {
            for (const b of batch) b.reject(e);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}

/**
 * A short-lived cache in front of a remote source (Secrets Manager, SSM), per worker process.
 * A burst of tasks that use one secret then costs one read a minute rather than one per attempt
 * (each GetSecretValue is billed and rate-limited), while a rotated or corrected secret reaches
 * the next attempts within {@link SECRET_CACHE_MS}: AWS's own caching clients default to an hour,
 * which is too long for a value a user just fixed after a failure. Only values are cached: a
 * missing secret or a denied read is asked again at the next attempt (the retry may succeed once
 * it was created or granted). Concurrent reads of one name share one request.
 */
import type { SecretName } from "../core/secret-references.js";
import type { SecretSource } from "./secret-source.js";

/** How long a value read is reused, ms (1 minute; at most 5 by design). */
export const SECRET_CACHE_MS = 60_000;

export class CachedSecretSource implements SecretSource {
  private readonly entries = new Map<string, { at: number; value: Promise<string | undefined> }>();

  /** @param now the clock, epoch ms. */
  constructor(
    private readonly inner: SecretSource,
    private readonly now: () => number = Date.now,
    private readonly ttlMs: number = SECRET_CACHE_MS,
  ) {}

  get(name: SecretName): Promise<string | undefined> {
    const key = `${name.store}\n${name.base}`;
    const t = this.now();
    const hit = this.entries.get(key);
    if (hit && t - hit.at < this.ttlMs) return hit.value;
    const value = this.inner.get(name);
    this.entries.set(key, { at: t, value });
    // Misses and failures are not kept.
    value.then(
      (v) => {
        if (v === undefined && this.entries.get(key)?.value === value) this.entries.delete(key);
      },
      () => {
        if (this.entries.get(key)?.value === value) this.entries.delete(key);
      },
    );
    return value;
  }

  where(name: SecretName): string {
    return this.inner.where(name);
  }
}

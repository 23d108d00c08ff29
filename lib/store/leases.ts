/**
 * The named-lease port (sweeper shards): conditional single-item writes stand in for the
 * ZooKeeper locks DolphinScheduler's masters take. Times are epoch milliseconds.
 */

/**
 * A named lease (e.g. one sweeper shard): held by `owner` until `expiresAt`. Stands in for the
 * ZooKeeper locks DolphinScheduler's masters take; expiry replaces the session timeout.
 */
export interface LeaseRecord {
  name: string;
  owner: string;
  /** Epoch ms; the lease is free once `expiresAt < now`. */
  expiresAt: number;
  /** When the current owner took it, epoch ms: renewals before expiry keep it, later claims reset it. */
  acquiredAt: number;
}

export interface LeaseStore {
  /**
   * Takes or renews the lease until `now + ttlMs`: succeeds when it is absent, expired
   * (`expiresAt < now`) or already `owner`'s.
   * @returns the lease as written, or undefined when another owner holds it.
   * @throws RangeError when ttlMs is not a positive number.
   */
  claimLease(
    name: string,
    owner: string,
    now: number,
    ttlMs: number,
  ): Promise<LeaseRecord | undefined>;
  /** Drops the lease if `owner` holds it. @returns false when it is not `owner`'s (or absent). */
  releaseLease(name: string, owner: string): Promise<boolean>;
  /** Strongly consistent read; an expired lease is returned as stored. */
  getLease(name: string): Promise<LeaseRecord | undefined>;
}

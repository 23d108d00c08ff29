/**
 * Standalone's retention: what DynamoDB TTL does on AWS (docs/aws.md "Retention and protection"),
 * done by standalone itself, because the emulators have no TTL. Standalone sets
 * SHOAL_INSTANCE_RETENTION_DAYS (`--retention-days`, 7 by default) so the store gives finished
 * instances and attempts the same `expiresAt` attribute as on AWS; this sweep, run at start and
 * then every SHOAL_RETENTION_SWEEP_SECONDS (600), deletes the instances whose time passed with
 * all their task instances, their task log files and their work directories, plus attempts and
 * fire-ledger entries that expired on their own. `--keep-all` (`--retention-days 0`) writes no
 * attribute, so nothing is ever deleted.
 *
 * Instances finished before retention was on carry no attribute and are kept; a changed
 * `--retention-days` applies to instances that finish from then on.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { DynamoExpiredItems } from "../store/dynamo-expired.js";

export interface RetentionDeps {
  expired: DynamoExpiredItems;
  /** The data directory: task logs under `logs/`, work directories under `work/`. */
  dataDir: string;
  now: () => number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** What one sweep deleted. */
export interface RetentionSweep {
  instances: number;
  tasks: number;
  fires: number;
}

/** Days standalone keeps a finished instance unless told otherwise (`--retention-days`). */
export const DEFAULT_RETENTION_DAYS = 7;

/** Items one sweep deletes per kind at most; a backlog goes over the next sweeps. */
const SWEEP_LIMIT = 1_000;

/**
 * Deletes what expired at `deps.now()`. An instance's files go before its items, so a sweep cut
 * short leaves the instance to be found again by the next one, never files without an owner.
 */
export async function sweepRetention(deps: RetentionDeps): Promise<RetentionSweep> {
  const now = deps.now();
  let instances = 0;
  for (const inst of await deps.expired.expiredInstances(now, SWEEP_LIMIT)) {
    await Promise.all(
      ["logs", "work"].map((d) =>
        rm(join(deps.dataDir, d, inst.workflow, inst.instanceId), {
          recursive: true,
          force: true,
        }),
      ),
    );
    if (await deps.expired.deleteInstance(inst.instanceId, now)) instances++;
  }
  const tasks = await deps.expired.deleteExpired("tasks", now, SWEEP_LIMIT);
  const fires = await deps.expired.deleteExpired("fires", now, SWEEP_LIMIT);
  if (instances + tasks + fires > 0) {
    deps.log?.("standalone: retention sweep deleted expired items", { instances, tasks, fires });
  }
  return { instances, tasks, fires };
}

/**
 * Runs {@link sweepRetention} now and then every `periodMs`, one sweep at a time.
 * @returns stop: ends the timer and waits for a sweep under way.
 */
export function startRetention(deps: RetentionDeps, periodMs: number): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const tick = () => {
    if (busy) return;
    busy = true;
    running = sweepRetention(deps)
      .catch((e) => deps.log?.("standalone: retention sweep failed", { error: String(e) }))
      .finally(() => {
        busy = false;
      });
  };
  tick();
  const timer = setInterval(tick, periodMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

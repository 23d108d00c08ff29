/**
 * Standalone's retention: what DynamoDB TTL does on AWS (docs/aws.md "Retention and protection"),
 * done by standalone itself, because the emulators have no TTL. Standalone sets
 * SHOAL_INSTANCE_RETENTION_DAYS (`--retention-days`, 7 by default) so the store gives finished
 * instances and attempts the same `expiresAt` attribute as on AWS; this sweep, run at start and
 * then every SHOAL_RETENTION_SWEEP_SECONDS (600), deletes:
 *
 * - the instances whose time passed, with all their task instances, then their task log files
 *   and work directories (the instance goes first, conditionally: a rerun that came in since the
 *   scan keeps it, and its files);
 * - task attempts that expired and whose instance is gone; never an attempt of an instance that
 *   still exists, whatever its own attribute says (lib/store/dynamo-expired.ts);
 * - fire-ledger entries that expired (never one still QUEUED_SERIAL);
 * - alert delivery records: with their instance, and on their own once expired when they belong
 *   to no existing instance (a schedule's misfire; lib/alerts/dynamo-expired-deliveries.ts);
 * - commands DONE for longer than the retention whose instance is gone, and halt markers
 *   written longer ago than that (the commands table has no TTL, on AWS neither; standalone's
 *   would otherwise only grow);
 * - log and work directories of instances the store no longer has, once they are
 *   {@link ORPHAN_FILES_AGE_MS} old (a sweep cut short between an instance and its files).
 *
 * `--keep-all` (`--retention-days 0`) writes no attribute and runs no sweep, so nothing is ever
 * deleted. Instances finished before retention was on carry no attribute and are kept; a
 * changed `--retention-days` applies to instances that finish from then on.
 */
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import pLimit from "p-limit";
import type { DynamoExpiredDeliveries } from "../alerts/dynamo-expired-deliveries.js";
import type { DynamoExpiredItems } from "../store/dynamo-expired.js";

export interface RetentionDeps {
  expired: Pick<
    DynamoExpiredItems,
    | "expiredInstances"
    | "deleteInstance"
    | "deleteOrphanedAttempts"
    | "deleteExpiredFires"
    | "deleteDoneCommands"
    | "deleteExpiredTriggerCounters"
    | "instanceExists"
  >;
  /** Alert delivery records (timers table); absent: left alone. */
  deliveries?: Pick<DynamoExpiredDeliveries, "deleteWithInstance" | "deleteExpired">;
  /** The data directory: task logs under `logs/`, work directories under `work/`. */
  dataDir: string;
  /** The retention, days (> 0): how long a DONE command is kept. */
  retentionDays: number;
  now: () => number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** What one sweep deleted. */
export interface RetentionSweep {
  instances: number;
  tasks: number;
  fires: number;
  commands: number;
  /** Expired loop and rate counters of triggers (lib/store/dynamo-triggers.ts). */
  triggerCounters: number;
  /** Log and work directories of instances that were already gone. */
  orphanDirs: number;
  /** Alert delivery records (only when `deliveries` is given). */
  alerts?: number;
}

/** Days standalone keeps a finished instance unless told otherwise (`--retention-days`). */
export const DEFAULT_RETENTION_DAYS = 7;

/** Items one sweep deletes per kind at most; a backlog goes over the next sweeps. */
const SWEEP_LIMIT = 1_000;

/** Age (last change) after which the files of an instance the store does not have go, ms. */
export const ORPHAN_FILES_AGE_MS = 10 * 60_000;

/** Store reads under way at once while looking for orphaned directories. */
const ORPHAN_READS = 8;

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/** Removes an instance's log and work directories. */
function removeFiles(dataDir: string, workflow: string, instanceId: string) {
  return Promise.all(
    ["logs", "work"].map((d) =>
      rm(join(dataDir, d, workflow, instanceId), { recursive: true, force: true }),
    ),
  );
}

/**
 * Removes the `logs/<workflow>/<instanceId>` and `work/<workflow>/<instanceId>` directories of
 * instances the store no longer has, once unchanged for {@link ORPHAN_FILES_AGE_MS}.
 * @returns how many directories were removed.
 */
async function sweepOrphanDirs(deps: RetentionDeps, now: number): Promise<number> {
  const dirs: Array<{ instanceId: string; path: string }> = [];
  for (const kind of ["logs", "work"]) {
    const root = join(deps.dataDir, kind);
    for (const workflow of await names(root)) {
      for (const instanceId of await names(join(root, workflow))) {
        dirs.push({ instanceId, path: join(root, workflow, instanceId) });
      }
    }
  }
  let removed = 0;
  await pLimit(ORPHAN_READS).map(dirs, async (d) => {
    const changed = await stat(d.path).then(
      (s) => s.mtimeMs,
      () => now,
    );
    if (now - changed < ORPHAN_FILES_AGE_MS) return;
    if (await deps.expired.instanceExists(d.instanceId)) return;
    await rm(d.path, { recursive: true, force: true });
    removed++;
  });
  return removed;
}

/**
 * Deletes what expired at `deps.now()` (see the module comment). An instance is deleted before
 * its files, so a rerun between the scan and the delete keeps both; a sweep cut short after the
 * delete leaves files without an owner, which a later sweep removes.
 */
export async function sweepRetention(deps: RetentionDeps): Promise<RetentionSweep> {
  const now = deps.now();
  let instances = 0;
  let alerts = 0;
  for (const inst of await deps.expired.expiredInstances(now, SWEEP_LIMIT)) {
    if (!(await deps.expired.deleteInstance(inst.instanceId, now))) continue;
    instances++;
    // After the instance: a sweep cut short here leaves records the pass below finds.
    alerts += (await deps.deliveries?.deleteWithInstance(inst.instanceId)) ?? 0;
    await removeFiles(deps.dataDir, inst.workflow, inst.instanceId);
  }
  if (deps.deliveries) {
    alerts += await deps.deliveries.deleteExpired(now, SWEEP_LIMIT, (id) =>
      deps.expired.instanceExists(id),
    );
  }
  const tasks = await deps.expired.deleteOrphanedAttempts(now, SWEEP_LIMIT);
  const fires = await deps.expired.deleteExpiredFires(now, SWEEP_LIMIT);
  const commands = await deps.expired.deleteDoneCommands(
    now - deps.retentionDays * 86_400_000,
    SWEEP_LIMIT,
  );
  const triggerCounters = await deps.expired.deleteExpiredTriggerCounters(now, SWEEP_LIMIT);
  const orphanDirs = await sweepOrphanDirs(deps, now);
  const swept = {
    instances,
    tasks,
    fires,
    commands,
    triggerCounters,
    orphanDirs,
    ...(deps.deliveries ? { alerts } : {}),
  };
  if (instances + tasks + fires + commands + triggerCounters + orphanDirs + alerts > 0) {
    deps.log?.("standalone: retention sweep deleted expired items", { ...swept });
  }
  return swept;
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

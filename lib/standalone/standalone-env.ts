/**
 * The environment `shoal standalone` runs with and writes to `<dataDir>/endpoints.env` (for
 * `shoal worker` and `shoal sweeper`), and its configuration built from it.
 */
import { configFromEnv, ENV, resourceNames, type ShoalConfig } from "../aws/config.js";
import type { StorageBackend } from "./storage-backend.js";

/** Standalone's region (the emulators and the embedded backend take any). */
export const REGION = "us-east-1";

/** The emulators' dummy credentials (they accept any). */
const LOCAL_CREDENTIALS = { accessKeyId: "shoal-local", secretAccessKey: "shoal-local" };

/** Environment of standalone, also written to `<dataDir>/endpoints.env` for `shoal worker`. */
export function standaloneEnv(
  prefix: string,
  em: StorageBackend,
  dataDir: string,
  eventsQueueUrl: string,
  retentionDays: number,
): Record<string, string> {
  const names = resourceNames(prefix);
  return {
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: em.dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: em.sqsEndpoint,
    // Processes that join open the embedded backend's files directly (its endpoint serves the rest).
    ...(em.embeddedDir ? { [ENV.embeddedDir]: em.embeddedDir } : {}),
    // Names, spelled out so that a process started with this file needs nothing else.
    [ENV.prefix]: prefix,
    [ENV.workflowsTable]: names.tables.workflows,
    [ENV.commandsTable]: names.tables.commands,
    [ENV.instancesTable]: names.tables.instances,
    [ENV.tasksTable]: names.tables.tasks,
    [ENV.taskGroupsTable]: names.tables.taskGroups,
    [ENV.timersTable]: names.tables.timers,
    [ENV.schedulesTable]: names.tables.schedules,
    [ENV.firesTable]: names.tables.fires,
    [ENV.leasesTable]: names.tables.leases,
    [ENV.backfillsTable]: names.tables.backfills,
    [ENV.triggersTable]: names.tables.triggers,
    [ENV.dataDir]: dataDir,
    [ENV.eventsQueueUrl]: eventsQueueUrl,
    [ENV.leaseSeconds]: "10",
    [ENV.leaseRenewSeconds]: "1",
    [ENV.autoCreateQueues]: "true",
    [ENV.commandResignalSeconds]: "10",
    [ENV.singleDispatcher]: "true",
    // Finished items get the TTL attribute, which the retention sweep acts on (and external
    // `shoal worker`s write it on the attempts they end).
    [ENV.instanceRetentionDays]: String(retentionDays),
  };
}

/**
 * Standalone's configuration: its environment (`standaloneEnv`, the values it sets) over this
 * process's (what it leaves to the user, e.g. SHOAL_KEEP_FAILED_WORK_MINUTES), with the
 * emulators' credentials. Empty values are left out.
 */
export function standaloneConfig(
  inherited: NodeJS.ProcessEnv,
  env: Record<string, string>,
): ShoalConfig {
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ""));
  const config = configFromEnv({ ...inherited, ...set });
  return { ...config, aws: { ...config.aws, credentials: LOCAL_CREDENTIALS } };
}

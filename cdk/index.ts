/**
 * The public entry of `shoal/cdk`: the {@link Shoal} construct, its props, and the types of its
 * public fields. aws-cdk-lib and constructs are peer dependencies; cdk-nag is not needed (the
 * construct writes its accepted findings as `cdk_nag` metadata, which cdk-nag reads when used).
 *
 * ```ts
 * import { Shoal } from "shoal/cdk";
 * new Shoal(this, "Scheduler", { prefix: "acme", alarmEmail: "ops@example.com" });
 * ```
 */
export type { AlertChannelOptions, ShoalAlertsOptions } from "./alerts.js";
export { type EcsWorkerOptions, EcsWorkers } from "./ecs-workers.js";
export type { ShoalMonitoring } from "./monitoring.js";
export {
  Shoal,
  type ShoalProps,
  WORKER_CONCURRENCY,
  WORKER_EPHEMERAL_STORAGE_MIB,
  type WorkerSettings,
  workerSettings,
} from "./shoal.js";
export { ShoalStack } from "./shoal-stack.js";

/**
 * The props of the {@link Shoal} construct and the worker settings it applies (per-tier
 * concurrency, `/tmp` size), apart from the construct's wiring (cdk/shoal.ts).
 */
import type { RemovalPolicy } from "aws-cdk-lib";
import { ENV } from "../lib/aws/config.js";
import { PRIORITIES, type Priority } from "../lib/core/model.js";
import { TRIGGER_LIMIT_RANGES } from "../lib/core/trigger-events.js";
import type { ShoalAlertsOptions } from "./alerts.js";
import type { EcsWorkerOptions } from "./ecs-workers.js";

/**
 * Options of the `Shoal` construct (cdk/shoal.ts), all optional (`new Shoal(this, "Scheduler")` deploys
 * the defaults). The repository's own app sets them from context flags (cdk/app.ts).
 */
export interface ShoalProps {
  /**
   * Prefix of every physical name: tables `<prefix>-<table>`, queues `<prefix>-…`, functions
   * `<prefix>-api` …, the bus `<prefix>-bus`, log groups `/<prefix>/…`, the dashboard, the
   * alarm topic, the ECS cluster. Two Shoal deployments in one account and region need two
   * prefixes. The CLI and standalone use the same value (`SHOAL_PREFIX`). Default "shoal".
   * 1-53 letters, digits, `-` or `_` from a letter or digit: `<prefix>-dispatcher` is a Lambda
   * function name (64 at most); checked at synthesis (cdk/name-limits.ts).
   */
  prefix?: string;
  /**
   * Prefix of the stack output keys (`<outputPrefix>ApiUrl`, `<outputPrefix>Prefix`, …).
   * Default "": `ApiUrl`, the keys `shoal config from-stack` reads, so the default suits one
   * Shoal per stack. A second Shoal in the same stack needs one (e.g. "Batch").
   */
  outputPrefix?: string;
  /**
   * What `cdk destroy` (or removing the construct) does with the data: the DynamoDB tables and
   * the named log groups (task logs, API access logs, ECS worker and VPC flow logs). Default
   * `RemovalPolicy.RETAIN`: they stay, and a redeploy with the same prefix fails until they are
   * deleted by hand. `RemovalPolicy.DESTROY` deletes them (for test and preview stacks; it
   * also turns `deletionProtection` off unless set). The functions' own log groups are always
   * deleted with the stack.
   */
  removalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection of the tables. Default true, or false when `removalPolicy` is
   * DESTROY (a protected table cannot be deleted).
   */
  deletionProtection?: boolean;
  /**
   * Days CloudWatch Logs keeps the task logs, API access logs, ECS worker, VPC flow logs and the
   * functions' logs: a `RetentionDays` value (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365,
   * 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653; 9999 = forever). Default 30.
   */
  logRetentionDays?: number;
  /**
   * The API's front door. "httpApi" (default): an API Gateway HTTP API with IAM (or `jwt`)
   * authorisation and access logs. "functionUrl": a Lambda function URL with IAM auth, for
   * LocalStack's free tier, which has no HTTP API.
   */
  apiMode?: "httpApi" | "functionUrl";
  /**
   * Lambda worker groups: each gets five task queues (one per priority) and a worker function
   * (`<prefix>-worker` for "default", `<prefix>-worker-<group>` for the others). Tasks choose
   * theirs with `workerGroup`. Default ["default"]. At least one, each listed once and matching
   * WORKER_GROUP_PATTERN, with `<prefix>-worker-<group>` at most 64 characters and
   * `<prefix>-tasks-<group>-highest-dlq` at most 80 (checked at synthesis).
   */
  workerGroups?: string[];
  /**
   * An ECS Fargate worker group for tasks longer than Lambda's 15 minutes: a VPC without NAT, a
   * cluster and a service scaled on its queues' depth down to zero tasks. `{}` for the
   * defaults (group "ecs", 1 vCPU, 2 GiB, up to 10 tasks). None when absent. The image is built
   * by Docker at `cdk deploy` (synthesis needs no Docker).
   */
  ecsWorkers?: EcsWorkerOptions;
  /**
   * JWT authorisation of the HTTP API instead of IAM: tokens of `issuer` (an https URL, its
   * OpenID discovery document names the keys) whose `aud` is one of `audience`. httpApi only.
   */
  jwt?: { issuer: string; audience: string[] };
  /**
   * An e-mail address mailed on every alarm (function errors, DLQ messages, late schedules,
   * throttles) through an SNS topic `<prefix>-alarms`; AWS mails a confirmation link first.
   * No topic when absent (the alarms still show on the dashboard).
   */
  alarmEmail?: string;
  /**
   * Days a finished workflow instance (with its tasks) is kept before DynamoDB TTL deletes it.
   * Default 90; 0 = forever.
   */
  instanceRetentionDays?: number;
  /**
   * ARNs of the functions LAMBDA tasks may invoke (with their versions and aliases). None by
   * default: least privilege, a LAMBDA task fails with AccessDenied until its function is listed.
   */
  lambdaTaskFunctions?: string[];
  /**
   * ARNs of the state machines STEP_FUNCTIONS tasks may start (and whose executions they may
   * describe and stop). None by default.
   */
  stepFunctionsTaskStateMachines?: string[];
  /** Alert channels of the workflows' and schedules' alert rules (cdk/alerts.ts, docs/alerts.md). */
  alerts?: ShoalAlertsOptions;
  /**
   * Which task state-change events go to the event bus: `unsuccessful` (default: every attempt
   * that did not end SUCCESS, which TASK_RETRY_EXHAUSTED alerts need), `all` (one more
   * EventBridge event per successful task: $1.00 per million tasks at us-east-1 list price), or
   * `none`. Instance events always go (docs/events.md).
   */
  taskEvents?: "unsuccessful" | "all" | "none";
  /**
   * What cuts trigger loops and storms off (docs/events.md "Trigger loops and storms"): how deep
   * a chain of trigger-started runs may go (default 10), how many runs one originating event may
   * lead to in all (default 100), and how many runs one trigger may start a minute (default 60;
   * the excess is refused and counted). Checked at synthesis.
   */
  triggerLimits?: { maxDepth?: number; maxRunsPerEvent?: number; maxRunsPerMinute?: number };
  /**
   * Secrets tasks may read with `${secret:NAME}` (docs/secrets.md): Secrets Manager names
   * (`prod/db`), name prefixes (`prod/*`) or ARNs, and SSM parameters as `ssm:/prod/db/pw`
   * (`ssm:/prod/*`). The workers get read access to these only (cdk/secrets.ts). None by default.
   */
  taskSecrets?: string[];
  /**
   * Most concurrent worker invocations per priority tier, in every Lambda worker group: each
   * tier's SQS event source mapping's maximum concurrency (Lambda allows 2 … 1,000). Tiers left
   * out keep {@link WORKER_CONCURRENCY} (HIGHEST 20, HIGH 10, MEDIUM 6, LOW 3, LOWEST 2). A
   * higher tier may not get fewer than a lower one: on Lambda the order under backlog comes from
   * these numbers (docs/aws.md "Worker capacity"). The sum over tiers and worker groups must fit
   * the account's Lambda concurrency (1,000 by default, shared with everything else).
   * @example { HIGHEST: 200, HIGH: 150, MEDIUM: 100 }
   */
  workerConcurrency?: Partial<Record<Priority, number>>;
  /**
   * Task messages one worker invocation takes, 1 … 10 (default 1). With more than one, the
   * tasks of a batch run side by side in one sandbox (its 1,024 MB and the CPU share that goes
   * with it), and the invocation lasts as long as the longest of them: fewer invocations, SQS
   * receives and deletes per task (cheaper and faster for wide DAGs of short or I/O-bound tasks:
   * HTTP, LAMBDA, STEP_FUNCTIONS, shell tasks that wait), slower for CPU-heavy shell tasks. No
   * batching window: a receive hands over whatever is there, so a lone task does not wait.
   */
  workerBatchSize?: number;
}

/** The worker settings of {@link ShoalProps}, checked, with the defaults filled in. */
export interface WorkerSettings {
  /** Maximum concurrency of each tier's event source mapping. */
  concurrency: Record<Priority, number>;
  /** Messages per worker invocation. */
  batchSize: number;
}

/**
 * The environment variables of `triggerLimits` (only those given), checked.
 * @throws Error naming the prop and its range (lib/core/trigger-events.ts TRIGGER_LIMIT_RANGES).
 */
export function triggerLimitsEnv(limits: ShoalProps["triggerLimits"]): Record<string, string> {
  const out: Record<string, string> = {};
  const fields = [
    ["maxDepth", "maxDepth", ENV.triggerMaxDepth],
    ["maxRunsPerEvent", "maxRunsPerOrigin", ENV.triggerMaxRunsPerEvent],
    ["maxRunsPerMinute", "maxRunsPerMinute", ENV.triggerMaxRunsPerMinute],
  ] as const;
  for (const [prop, range, env] of fields) {
    const n = limits?.[prop];
    if (n === undefined) continue;
    const [lo, hi] = TRIGGER_LIMIT_RANGES[range];
    if (!Number.isInteger(n) || n < lo || n > hi) {
      throw new Error(`triggerLimits.${prop} must be an integer from ${lo} to ${hi}, got ${n}`);
    }
    out[env] = String(n);
  }
  return out;
}

/**
 * `workerConcurrency` and `workerBatchSize` with their defaults, checked.
 * @throws Error naming the prop and the rule: an unknown tier, a concurrency that is not an
 *   integer from 2 to 1,000 (the range CloudFormation takes for `ScalingConfig.MaximumConcurrency`),
 *   a higher tier with fewer invocations than a lower one, a batch size outside 1 … 10.
 */
export function workerSettings(
  props: Pick<ShoalProps, "workerConcurrency" | "workerBatchSize">,
): WorkerSettings {
  const given = props.workerConcurrency ?? {};
  for (const tier of Object.keys(given)) {
    if (!(PRIORITIES as readonly string[]).includes(tier)) {
      throw new Error(
        `workerConcurrency: '${tier}' is not a priority (one of ${PRIORITIES.join(", ")})`,
      );
    }
  }
  const concurrency = { ...WORKER_CONCURRENCY };
  for (const tier of PRIORITIES) {
    const n = given[tier];
    if (n === undefined) continue;
    if (!Number.isInteger(n) || n < 2 || n > 1000) {
      throw new Error(
        `workerConcurrency.${tier} must be an integer from 2 to 1000 (a Lambda event source mapping's maximum concurrency), got ${n}`,
      );
    }
    concurrency[tier] = n;
  }
  for (let i = 1; i < PRIORITIES.length; i++) {
    const higher = PRIORITIES[i - 1] as Priority;
    const lower = PRIORITIES[i] as Priority;
    if (concurrency[higher] < concurrency[lower]) {
      throw new Error(
        `workerConcurrency: ${higher} (${concurrency[higher]}) is below ${lower} (${concurrency[lower]}): under backlog a ${higher} task would get fewer worker slots than a ${lower} one; give ${higher} at least ${concurrency[lower]}`,
      );
    }
  }
  const batchSize = props.workerBatchSize ?? 1;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10) {
    throw new Error(`workerBatchSize must be an integer from 1 to 10, got ${batchSize}`);
  }
  return { concurrency, batchSize };
}

/**
 * Concurrent worker invocations per priority tier. Lambda polls every queue at once, so the
 * order under backlog comes from these weights: a HIGHEST task has ten times the worker slots
 * of a LOWEST one (docs/aws.md). ECS workers drain the tiers strictly in order instead.
 */
export const WORKER_CONCURRENCY: Record<Priority, number> = {
  HIGHEST: 20,
  HIGH: 10,
  MEDIUM: 6,
  LOW: 3,
  LOWEST: 2,
};

/**
 * `/tmp` of a worker function, MiB (Lambda's default is 512, up to 10,240). A task's working
 * directory and `$SHOAL_INSTANCE_DIR` live there, and a warm worker keeps its `/tmp` from one
 * task to the next: successful attempts' directories go when they end, but a failed attempt's
 * stays for SHOAL_KEEP_FAILED_WORK_MINUTES (60) for debugging (lib/engine/work-dirs.ts), so one
 * sandbox may hold the files of one running task plus a few failed ones. 2 GiB leaves room for
 * tasks that unpack or download a few hundred MB; storage beyond 512 MB costs little (billed
 * per GB-second, like memory). Tasks needing more belong on ECS workers.
 */
export const WORKER_EPHEMERAL_STORAGE_MIB = 2048;

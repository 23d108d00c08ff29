/**
 * Synthesis-time checks of the props every physical name is built from (`prefix`,
 * `workerGroups`, `ecsWorkers.group`), against the length and character limits of the names the
 * `Shoal` construct builds from them. Without them a bad value fails at deploy time with a
 * CloudFormation message about a function or queue name that never mentions the prop.
 *
 * Limits (AWS docs): Lambda function names 64 characters; SQS queue names 80, `.fifo` included;
 * DynamoDB table names 255; CloudWatch dashboard names 255; EventBridge bus names 256; SNS topic
 * names 256; CloudWatch Logs group names 512; API Gateway API and authoriser names 128; ECS
 * cluster, service and task-definition family names 255. The characters every one of them
 * allows are letters, digits, `-` and `_` (dashboards, functions, queues and topics take no `.`).
 */
import { resourceNames } from "../lib/aws/config.js";
import { PRIORITIES } from "../lib/core/model.js";
import { WORKER_GROUP_PATTERN } from "../lib/core/schema-parts.js";

/** One kind of physical name: what AWS calls it and the most characters it may have. */
interface NameRule {
  what: string;
  max: number;
  /** Every name of this kind the construct builds from the prefix. */
  names: (prefix: string) => string[];
}

const HANDLERS = ["api", "dispatcher", "sweeper", "trigger", "worker", "alerts"];

/** The names built from the prefix alone (cdk/shoal.ts, api.ts, monitoring.ts, ecs-workers.ts). */
const PREFIX_NAMES: NameRule[] = [
  { what: "Lambda function name", max: 64, names: (p) => HANDLERS.map((h) => `${p}-${h}`) },
  {
    what: "SQS queue name",
    max: 80,
    names: (p) => {
      const n = resourceNames(p);
      return [n.eventsQueue, n.eventsDlq, n.signalsQueue, n.signalsDlq];
    },
  },
  { what: "DynamoDB table name", max: 255, names: (p) => Object.values(resourceNames(p).tables) },
  { what: "CloudWatch dashboard name", max: 255, names: (p) => [p] },
  { what: "EventBridge event bus name", max: 256, names: (p) => [`${p}-bus`] },
  { what: "SNS topic name", max: 256, names: (p) => [`${p}-alarms`] },
  {
    what: "CloudWatch Logs group name",
    max: 512,
    names: (p) => [
      ...["tasks", "api-access", "ecs-workers", "vpc-flow-logs"].map((g) => `/${p}/${g}`),
      ...HANDLERS.map((h) => `/aws/lambda/${p}-${h}`),
    ],
  },
  { what: "API Gateway name", max: 128, names: (p) => [`${p}-api`, `${p}-jwt`] },
  { what: "ECS cluster name", max: 255, names: (p) => [`${p}-workers`] },
];

/** Letters, digits, `-` and `_`, from a letter or digit: what every name above accepts. */
const PREFIX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * The longest prefix every name of {@link PREFIX_NAMES} fits (53: `<prefix>-dispatcher` is a
 * Lambda function name of at most 64 characters), with the name that sets it.
 */
export const PREFIX_LIMIT: { max: number; name: string; what: string; nameMax: number } = (() => {
  let best = { max: Number.POSITIVE_INFINITY, name: "", what: "", nameMax: 0 };
  for (const rule of PREFIX_NAMES) {
    for (const name of rule.names("")) {
      const max = rule.max - name.length;
      if (max < best.max) best = { max, name, what: rule.what, nameMax: rule.max };
    }
  }
  return best;
})();

/**
 * Checks `prefix` against the names built from it.
 * @throws Error `prefix: must …` naming the rule and the value.
 */
export function checkPrefix(prefix: string): void {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `prefix: must be letters, digits, '-' or '_', starting with a letter or digit (it starts Lambda function, SQS queue and dashboard names), got '${prefix}'`,
    );
  }
  if (prefix.length > PREFIX_LIMIT.max) {
    throw new Error(
      `prefix: must be at most ${PREFIX_LIMIT.max} characters (the ${PREFIX_LIMIT.what} '<prefix>${PREFIX_LIMIT.name}' may have ${PREFIX_LIMIT.nameMax}), got ${prefix.length}: '${prefix}'`,
    );
  }
}

/**
 * Checks the names built from the prefix and one worker group: its five queues and their DLQs
 * (`<prefix>-tasks-<group>-highest-dlq` the longest) and its Lambda function
 * (`<prefix>-worker-<group>`) or ECS service.
 */
function checkGroupNames(prop: string, prefix: string, group: string, lambda: boolean): void {
  const n = resourceNames(prefix);
  const worker = `${prefix}-worker-${group}`;
  const kinds: Array<{ what: string; max: number; names: string[] }> = [
    {
      what: "SQS queue name",
      max: 80,
      names: PRIORITIES.flatMap((p) => [n.taskQueue(group, p), n.taskDlq(group, p)]),
    },
    lambda
      ? { what: "Lambda function name", max: 64, names: group === "default" ? [] : [worker] }
      : { what: "ECS service name", max: 255, names: [worker] },
  ];
  for (const { what, max, names } of kinds) {
    const long = names.find((name) => name.length > max);
    if (long !== undefined) {
      throw new Error(
        `${prop}: '${group}' with prefix '${prefix}' makes the ${what} '${long}' ${long.length} characters, over the ${max} AWS allows: shorten the group or the prefix`,
      );
    }
  }
}

/**
 * Checks the Lambda worker groups (each a worker-group name as tasks give it, listed once, at
 * least one) and the ECS group against the names built from them with the prefix.
 * @param ecsGroup `ecsWorkers.group` when ECS workers are on (its characters are checked by
 *   ecsWorkerSettings).
 * @throws Error `workerGroups: …` or `ecsWorkers.group: …` naming the rule and the value.
 */
export function checkWorkerGroups(prefix: string, groups: string[], ecsGroup?: string): void {
  if (!Array.isArray(groups) || groups.length === 0) {
    throw new Error(
      "workerGroups: must list at least one group (tasks without a workerGroup use 'default')",
    );
  }
  const seen = new Set<string>();
  for (const group of groups) {
    if (typeof group !== "string" || !WORKER_GROUP_PATTERN.test(group)) {
      throw new Error(
        `workerGroups: each must match ${WORKER_GROUP_PATTERN.source} (a worker group, as tasks name it), got '${String(group)}'`,
      );
    }
    if (seen.has(group)) throw new Error(`workerGroups: '${group}' is listed twice`);
    seen.add(group);
    checkGroupNames("workerGroups", prefix, group, true);
  }
  if (ecsGroup !== undefined) checkGroupNames("ecsWorkers.group", prefix, ecsGroup, false);
}

/**
 * `ShoalStack`: a stack holding one `Shoal` construct, and `shoalPropsFromContext`, which reads
 * the construct's props from CDK context flags (`-c key=value`, or cdk.json "context").
 */
import { RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import type { EcsWorkerOptions } from "./ecs-workers.js";
import { Shoal, type ShoalProps } from "./shoal.js";

/**
 * `-c workerConcurrency=HIGHEST:200,HIGH:150,MEDIUM:100` (or that object in cdk.json) as a
 * record; the construct checks the tiers and numbers (cdk/shoal-props.ts workerSettings).
 * @throws Error naming the flag when an entry is not `TIER:number`.
 */
function tierNumbers(v: unknown): Partial<Record<string, number>> | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v === "object" && !Array.isArray(v)) return v as Record<string, number>;
  const out: Record<string, number> = {};
  for (const entry of String(v).split(",")) {
    const m = /^\s*([A-Za-z]+)\s*:\s*(\d+)\s*$/.exec(entry);
    if (!m) {
      throw new Error(
        `-c workerConcurrency must be TIER:number pairs separated by commas (HIGHEST:200,HIGH:150,MEDIUM:100), got '${entry.trim()}'`,
      );
    }
    out[(m[1] as string).toUpperCase()] = Number(m[2]);
  }
  return out;
}

/** A stack holding one {@link Shoal} (props under `shoal`). */
export class ShoalStack extends Stack {
  readonly shoal: Shoal;

  constructor(scope: Construct, id: string, props: StackProps & { shoal?: ShoalProps } = {}) {
    super(scope, id, props);
    this.shoal = new Shoal(this, "Shoal", props.shoal ?? {});
  }
}

/** Context keys `shoalPropsFromContext` reads (documented in cdk/app.ts and cdk/README.md). */
export const CONTEXT_KEYS = [
  "prefix",
  "apiMode",
  "deletionProtection",
  "removalPolicy",
  "workerGroups",
  "ecsWorkers",
  "ecsWorkerGroup",
  "ecsMaxTasks",
  "ecsCpu",
  "ecsMemoryMiB",
  "ecsConcurrency",
  "jwtIssuer",
  "jwtAudience",
  "alarmEmail",
  "logRetentionDays",
  "instanceRetentionDays",
  "lambdaTaskFunctions",
  "stateMachines",
  "workerConcurrency",
  "workerBatchSize",
] as const;

/**
 * The `Shoal` props the context asks for. Values come as strings from `-c` (typed values from
 * cdk.json work too); lists are comma-separated; unset keys keep the construct's defaults.
 * @param get reads one context key (`app.node.tryGetContext`).
 * @throws Error naming the flag when a value is malformed (the construct validates the rest).
 */
export function shoalPropsFromContext(
  get: (key: (typeof CONTEXT_KEYS)[number]) => unknown,
): ShoalProps {
  const str = (k: (typeof CONTEXT_KEYS)[number]): string | undefined => {
    const v = get(k);
    return v === undefined || v === null || v === "" ? undefined : String(v).trim();
  };
  const list = (k: (typeof CONTEXT_KEYS)[number]): string[] | undefined => {
    const v = get(k);
    const items = Array.isArray(v) ? v.map(String) : str(k)?.split(",");
    const clean = items?.map((s) => s.trim()).filter((s) => s !== "");
    return clean && clean.length > 0 ? clean : undefined;
  };
  const int = (k: (typeof CONTEXT_KEYS)[number]): number | undefined => {
    const s = str(k);
    if (s === undefined) return undefined;
    if (!/^\d+$/.test(s)) throw new Error(`-c ${k} must be a whole number, got '${s}'`);
    return Number(s);
  };
  const bool = (k: (typeof CONTEXT_KEYS)[number]): boolean | undefined => {
    const s = str(k);
    if (s === undefined) return undefined;
    if (s !== "true" && s !== "false") throw new Error(`-c ${k} must be true or false, got '${s}'`);
    return s === "true";
  };

  const apiMode = str("apiMode");
  if (apiMode !== undefined && apiMode !== "httpApi" && apiMode !== "functionUrl") {
    throw new Error(`-c apiMode must be httpApi or functionUrl, got '${apiMode}'`);
  }
  const removal = str("removalPolicy");
  if (removal !== undefined && removal !== "retain" && removal !== "destroy") {
    throw new Error(`-c removalPolicy must be retain or destroy, got '${removal}'`);
  }
  const ecs: EcsWorkerOptions = {};
  const ecsGroup = str("ecsWorkerGroup");
  if (ecsGroup !== undefined) ecs.group = ecsGroup;
  for (const [key, prop] of [
    ["ecsMaxTasks", "maxTasks"],
    ["ecsCpu", "cpu"],
    ["ecsMemoryMiB", "memoryMiB"],
    ["ecsConcurrency", "concurrency"],
  ] as const) {
    const n = int(key);
    if (n !== undefined) ecs[prop] = n;
  }
  const issuer = str("jwtIssuer");
  const audience = list("jwtAudience");
  if ((issuer === undefined) !== (audience === undefined)) {
    throw new Error("-c jwtIssuer and -c jwtAudience go together (JWT authorisation needs both)");
  }

  const props: ShoalProps = {
    prefix: str("prefix") ?? "shoal",
    apiMode: apiMode ?? "httpApi",
  };
  const deletionProtection = bool("deletionProtection");
  if (deletionProtection !== undefined) props.deletionProtection = deletionProtection;
  if (removal === "destroy") props.removalPolicy = RemovalPolicy.DESTROY;
  const set = <K extends keyof ShoalProps>(k: K, v: ShoalProps[K] | undefined) => {
    if (v !== undefined) props[k] = v;
  };
  set("workerGroups", list("workerGroups"));
  if (bool("ecsWorkers")) props.ecsWorkers = ecs;
  else if (Object.keys(ecs).length > 0) {
    throw new Error(
      "-c ecsWorkerGroup, ecsMaxTasks, ecsCpu, ecsMemoryMiB and ecsConcurrency need -c ecsWorkers=true",
    );
  }
  if (issuer !== undefined && audience !== undefined) props.jwt = { issuer, audience };
  set("alarmEmail", str("alarmEmail"));
  set("logRetentionDays", int("logRetentionDays"));
  set("instanceRetentionDays", int("instanceRetentionDays"));
  set("lambdaTaskFunctions", list("lambdaTaskFunctions"));
  set("stepFunctionsTaskStateMachines", list("stateMachines"));
  set("workerConcurrency", tierNumbers(get("workerConcurrency")));
  set("workerBatchSize", int("workerBatchSize"));
  return props;
}

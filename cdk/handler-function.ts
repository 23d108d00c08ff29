/**
 * One of Shoal's Lambda handlers as a function of the stack: Node 22 on arm64, the pre-built ESM
 * bundle `lambda/<handler>/` of cdk/bundles.ts (the installed package's `dist/`, or a fresh
 * build when running from the repository's sources; never Docker), and a log group of its own
 * with the stack's log retention.
 */
import { join } from "node:path";
import { type Duration, RemovalPolicy, Size } from "aws-cdk-lib";
import { Architecture, Code, Function as LambdaFunction, Runtime } from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { bundlesDir, type LambdaHandler } from "./bundles.js";

/** What {@link handlerFunction} needs besides its scope and name. */
export interface HandlerFunctionProps {
  /** The handler bundle (`worker` for every worker group's function). */
  handler: LambdaHandler;
  /** Physical name of the function (`<prefix>-<name>`). */
  functionName: string;
  timeout: Duration;
  /** MB; 512 unless given. */
  memorySize?: number;
  /** `/tmp` size in MiB; Lambda's default (512) unless given. */
  tmpMiB?: number;
  environment: Record<string, string>;
  retention: RetentionDays;
}

/** Declares the function `Fn-<name>` and its log group `Logs-<name>` in `scope`. */
export function handlerFunction(
  scope: Construct,
  name: string,
  props: HandlerFunctionProps,
): LambdaFunction {
  return new LambdaFunction(scope, `Fn-${name}`, {
    functionName: props.functionName,
    code: Code.fromAsset(join(bundlesDir(), props.handler)),
    handler: "index.handler",
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize ?? 512,
    ...(props.tmpMiB !== undefined ? { ephemeralStorageSize: Size.mebibytes(props.tmpMiB) } : {}),
    timeout: props.timeout,
    environment: props.environment,
    // Its own log group with the stack's retention (Lambda's implicit one never expires). No
    // fixed name, so a redeploy after `cdk destroy` never collides with a leftover.
    logGroup: new LogGroup(scope, `Logs-${name}`, {
      retention: props.retention,
      removalPolicy: RemovalPolicy.DESTROY,
    }),
  });
}

/**
 * One of Shoal's Lambda handlers (`functions/<handler>/index.ts`) as a function of the stack:
 * Node 22 on arm64, an ESM bundle built by the local esbuild (never Docker), and a log group of
 * its own with the stack's log retention.
 */
import { fileURLToPath } from "node:url";
import { type Duration, RemovalPolicy, Size } from "aws-cdk-lib";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";

const HANDLERS = fileURLToPath(new URL("../functions/", import.meta.url));

/** What {@link handlerFunction} needs besides its scope and name. */
export interface HandlerFunctionProps {
  /** The handler folder under functions/ (`worker` for every worker group's function). */
  handler: string;
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
): NodejsFunction {
  return new NodejsFunction(scope, `Fn-${name}`, {
    functionName: props.functionName,
    entry: `${HANDLERS}${props.handler}/index.ts`,
    handler: "handler",
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
    bundling: {
      format: OutputFormat.ESM,
      target: "node22",
      minify: true,
      // Error classes name themselves after their class (lib/core/errors.ts): keep class names
      // through minification so logs and answers say `RetryLater`, not `Cr`.
      keepNames: true,
      sourceMap: true,
      forceDockerBundling: false,
      // ESM bundles of CommonJS dependencies need `require`.
      banner:
        "import { createRequire as __shoalRequire } from 'module'; const require = __shoalRequire(import.meta.url);",
    },
  });
}

/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy` from the repository root (cdk.json).
 * Synthesis needs no AWS account and no Docker: esbuild bundles the handlers from the sources
 * afresh at every synthesis (cdk/bundles.ts), and the ECS worker image is only staged (Docker
 * builds it at deploy). Context flags (`-c key=value`, read by `shoalPropsFromContext` in
 * shoal-stack.ts; details in cdk/README.md):
 *
 * - `stackName` (default "Shoal"), `prefix` (default "shoal"), `deletionProtection=false`
 * - `removalPolicy=destroy`: `cdk destroy` deletes the tables and named log groups too
 * - `apiMode=functionUrl`: a Lambda function URL instead of the HTTP API (LocalStack's free tier)
 * - `workerGroups=default,gpu`: Lambda worker groups (default "default")
 * - `ecsWorkers=true`: an ECS Fargate worker group, with `ecsWorkerGroup` (default "ecs"),
 *   `ecsMaxTasks` (10), `ecsCpu` (1024), `ecsMemoryMiB` (2048), `ecsConcurrency` (4)
 * - `jwtIssuer=https://issuer/ jwtAudience=aud1,aud2`: JWT authorisation instead of IAM
 * - `alarmEmail=ops@example.com`: every alarm mails this address (SNS)
 * - `logRetentionDays=N`: task, API access, ECS and flow logs (a CloudWatch value, default 30)
 * - `instanceRetentionDays=N`: finished instances kept N days (default 90; 0 = forever)
 * - `lambdaTaskFunctions=arn1,arn2`, `stateMachines=arn1`: what LAMBDA / STEP_FUNCTIONS tasks
 *   may invoke or start (none by default)
 * - `workerConcurrency=HIGHEST:200,HIGH:150,MEDIUM:100`: concurrent worker invocations per
 *   priority tier (default HIGHEST 20, HIGH 10, MEDIUM 6, LOW 3, LOWEST 2)
 * - `workerBatchSize=N`: task messages per worker invocation, 1 … 10 (default 1)
 */
import { App } from "aws-cdk-lib";
import { ShoalStack, shoalPropsFromContext } from "./shoal-stack.js";

const app = new App();
const stackName = app.node.tryGetContext("stackName") as string | undefined;
try {
  new ShoalStack(app, stackName ?? "Shoal", {
    shoal: shoalPropsFromContext((key) => app.node.tryGetContext(key)),
  });
  app.synth();
} catch (e) {
  // A malformed flag or prop is a message naming it (the flags' and the construct's checks), not
  // a stack trace; SHOAL_DEBUG=1 keeps the stack, as the CLI does.
  process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  if (process.env.SHOAL_DEBUG && e instanceof Error && e.stack)
    process.stderr.write(`${e.stack}\n`);
  process.exit(1);
}

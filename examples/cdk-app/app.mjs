// @ts-check
/**
 * A team's own CDK app with Shoal in it: a reports bucket of its own, and the Shoal scheduler
 * (`new Shoal(this, "Scheduler", { … })` from `shoal/cdk`) whose tasks write to it. cdk-nag's
 * AwsSolutions checks run on the whole app: Shoal's own accepted findings come suppressed with
 * their reasons, everything else must pass.
 *
 *   npm install && npx cdk synth     (no AWS account, no Docker)
 *   npx cdk deploy                   (Docker builds the ECS worker image)
 */
import { App, Aspects, CfnOutput, RemovalPolicy, Stack } from "aws-cdk-lib";
import { BlockPublicAccess, Bucket, BucketEncryption } from "aws-cdk-lib/aws-s3";
import { AwsSolutionsChecks } from "cdk-nag";
import { Shoal } from "shoal/cdk";

class ReportsStack extends Stack {
  /**
   * @param {import("constructs").Construct} scope
   * @param {string} id
   * @param {import("aws-cdk-lib").StackProps} [props]
   */
  constructor(scope, id, props) {
    super(scope, id, props);

    const reports = new Bucket(this, "Reports", {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      serverAccessLogsPrefix: "access-logs/",
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const scheduler = new Shoal(this, "Scheduler", {
      // Physical names start with "reports-": another Shoal with another prefix can live in
      // the same account and region.
      prefix: "reports",
      alarmEmail: "ops@example.com",
      logRetentionDays: 14,
      instanceRetentionDays: 30,
      // A preview stack: `cdk destroy` deletes the tables and task logs too.
      removalPolicy: RemovalPolicy.DESTROY,
      // Tasks with `workerGroup: ecs` run on Fargate, for longer than Lambda's 15 minutes.
      ecsWorkers: { maxTasks: 2 },
    });

    // Tasks learn where to write from their environment.
    scheduler.functions.worker?.addEnvironment("REPORTS_BUCKET", reports.bucketName);
    new CfnOutput(this, "ReportsBucket", { value: reports.bucketName });
  }
}

const app = new App();
new ReportsStack(app, "Reports");
Aspects.of(app).add(new AwsSolutionsChecks());
app.synth();

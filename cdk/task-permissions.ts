/**
 * What LAMBDA and STEP_FUNCTIONS tasks may call: IAM statements for the workers (Lambda worker
 * functions and the ECS task role) naming only the functions and state machines the deployer
 * listed (`-c lambdaTaskFunctions=…`, `-c stateMachines=…`), and the cdk-nag suppressions of
 * the wildcards those need.
 */
import { Arn, ArnFormat, Token } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";

/**
 * cdk-nag suppressions of the wildcards {@link taskTypeStatements} needs (on all of Shoal: the
 * statements go to every worker's policy).
 */
export const TASK_TYPE_NAG_SUPPRESSIONS = [
  {
    id: "AwsSolutions-IAM5",
    reason:
      "LAMBDA tasks may name a version or alias (Qualifier) of a function the deployer listed: <function ARN>:* covers exactly those.",
    appliesTo: [{ regex: "/^Resource::arn:[^:]+:lambda:[^:]+:[0-9]+:function:[^:*]+:\\*$/g" }],
  },
  {
    id: "AwsSolutions-IAM5",
    reason:
      "STEP_FUNCTIONS tasks describe and stop the executions they started; execution names are generated per task attempt, so executions of a listed state machine are named by <name>:*.",
    appliesTo: [{ regex: "/^Resource::arn:[^:]+:states:[^:]+:[0-9]+:execution:[^:*]+:\\*$/g" }],
  },
];

/**
 * IAM statements LAMBDA and STEP_FUNCTIONS tasks need (lib/tasks/lambda.ts, step-functions.ts):
 * lambda:InvokeFunction on each function (and its versions and aliases, `<arn>:*`, unless the ARN
 * is qualified already); states:StartExecution on each state machine and
 * states:DescribeExecution/StopExecution on its executions
 * (`arn:<partition>:states:<region>:<account>:execution:<name>:*`).
 * @throws Error when a literal ARN is not a Lambda function or state machine ARN.
 */
export function taskTypeStatements(
  lambdaArns: string[],
  stateMachineArns: string[],
): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  if (lambdaArns.length > 0) {
    const resources = lambdaArns.flatMap((arn) => {
      if (Token.isUnresolved(arn)) return [arn, `${arn}:*`];
      const m = /^arn:[^:]+:lambda:[^:]+:\d{12}:function:[^:]+(:[^:]+)?$/.exec(arn);
      if (!m) throw new Error(`lambdaTaskFunctions: '${arn}' is not a Lambda function ARN`);
      return m[1] ? [arn] : [arn, `${arn}:*`];
    });
    statements.push(new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources }));
  }
  if (stateMachineArns.length > 0) {
    const executions = stateMachineArns.map((arn) => {
      if (Token.isUnresolved(arn)) {
        const c = Arn.split(arn, ArnFormat.COLON_RESOURCE_NAME);
        return `arn:${c.partition}:states:${c.region}:${c.account}:execution:${c.resourceName}:*`;
      }
      const m = /^(arn:[^:]+:states:[^:]+:\d{12}:)stateMachine:([^:]+)(?::[^:]+)?$/.exec(arn);
      if (!m) throw new Error(`stateMachines: '${arn}' is not a Step Functions state machine ARN`);
      return `${m[1]}execution:${m[2]}:*`;
    });
    statements.push(
      new PolicyStatement({ actions: ["states:StartExecution"], resources: stateMachineArns }),
      new PolicyStatement({
        actions: ["states:DescribeExecution", "states:StopExecution"],
        resources: executions,
      }),
    );
  }
  return statements;
}

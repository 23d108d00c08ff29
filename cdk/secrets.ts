/**
 * What task secrets (`${secret:NAME}`, lib/secrets/) a worker may read on AWS: IAM statements
 * for the workers (Lambda worker functions and the ECS task role) naming only the secrets and
 * parameters the deployer listed in `taskSecrets`, and the cdk-nag suppressions of the patterns
 * those need. Least privilege: `secretsmanager:GetSecretValue` on the listed secrets,
 * `ssm:GetParameter`/`ssm:GetParameters` on the listed parameters, and `kms:Decrypt` only when
 * Secrets Manager or SSM asks KMS on the worker's behalf (`kms:ViaService`), for secrets and
 * SecureStrings encrypted with a customer managed key (AWS managed keys need no grant).
 */
import { Stack } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { Construct } from "constructs";

/**
 * The ARN patterns of the listed names in `scope`'s account and region:
 * - a Secrets Manager name (`prod/db`) → `…:secret:prod/db-??????` (AWS appends six random
 *   characters to a secret's ARN: AWS Secrets Manager user guide, "Permissions policy examples");
 *   a name ending in `*` (`prod/*`) → `…:secret:prod/*`; an ARN → as it is;
 * - `ssm:` and a parameter name (`ssm:/prod/db/pw`, `ssm:/prod/*`) → `…:parameter/prod/db/pw`.
 * @throws Error naming the entry when it is neither (empty, or not a secretsmanager/ssm ARN).
 */
export function secretResources(
  scope: Construct,
  names: readonly string[],
): { secrets: string[]; parameters: string[] } {
  const { partition, region, account } = Stack.of(scope);
  const secrets: string[] = [];
  const parameters: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name.startsWith("ssm:")) {
      const p = name.slice(4).replace(/^\//, "");
      if (!/^[A-Za-z0-9_.\-/*]+$/.test(p)) {
        throw new Error(`taskSecrets: '${raw}' is not an SSM parameter name (ssm:/path/name)`);
      }
      parameters.push(`arn:${partition}:ssm:${region}:${account}:parameter/${p}`);
    } else if (name.startsWith("arn:")) {
      if (!/^arn:[^:]+:secretsmanager:[^:]+:\d{12}:secret:.+$/.test(name)) {
        throw new Error(`taskSecrets: '${raw}' is not a Secrets Manager secret ARN`);
      }
      secrets.push(name);
    } else {
      if (!/^[A-Za-z0-9/_+=.@\-*]+$/.test(name)) {
        throw new Error(
          `taskSecrets: '${raw}' is not a Secrets Manager name, ARN or ssm:<parameter name>`,
        );
      }
      const base = `arn:${partition}:secretsmanager:${region}:${account}:secret:${name}`;
      secrets.push(name.endsWith("*") ? base : `${base}-??????`);
    }
  }
  return { secrets, parameters };
}

/**
 * IAM statements for reading the listed secrets (see the file's comment); none for an empty list.
 * @throws Error for an entry {@link secretResources} refuses.
 */
export function secretStatements(scope: Construct, names: readonly string[]): PolicyStatement[] {
  const { secrets, parameters } = secretResources(scope, names);
  const { partition, region, account } = Stack.of(scope);
  const statements: PolicyStatement[] = [];
  const via: string[] = [];
  if (secrets.length > 0) {
    statements.push(
      new PolicyStatement({ actions: ["secretsmanager:GetSecretValue"], resources: secrets }),
    );
    via.push(`secretsmanager.${region}.amazonaws.com`);
  }
  if (parameters.length > 0) {
    statements.push(
      new PolicyStatement({
        actions: ["ssm:GetParameter", "ssm:GetParameters"],
        resources: parameters,
      }),
    );
    via.push(`ssm.${region}.amazonaws.com`);
  }
  if (via.length > 0) {
    statements.push(
      new PolicyStatement({
        actions: ["kms:Decrypt"],
        resources: [`arn:${partition}:kms:${region}:${account}:key/*`],
        conditions: { StringEquals: { "kms:ViaService": via } },
      }),
    );
  }
  return statements;
}

/** cdk-nag suppressions of the patterns {@link secretStatements} needs (stack-wide). */
export const SECRET_NAG_SUPPRESSIONS = [
  {
    id: "AwsSolutions-IAM5",
    reason:
      "Task secrets: the secrets and parameters the deployer listed in taskSecrets (a secret's ARN ends in six random characters, -??????; a listed name may be a prefix/*).",
    appliesTo: [
      { regex: "/^Resource::arn:<AWS::Partition>:secretsmanager:.*$/g" },
      { regex: "/^Resource::arn:<AWS::Partition>:ssm:.*\\*.*$/g" },
    ],
  },
  {
    id: "AwsSolutions-IAM5",
    reason:
      "Task secrets encrypted with a customer managed key: kms:Decrypt on the account's keys, only when Secrets Manager or SSM calls KMS for the worker (kms:ViaService).",
    appliesTo: [
      { regex: "/^Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key\\/\\*$/g" },
    ],
  },
];

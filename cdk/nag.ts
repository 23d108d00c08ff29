/**
 * cdk-nag suppressions without importing cdk-nag, so the construct works where it is not
 * installed: the `cdk_nag` metadata cdk-nag reads from each CloudFormation resource
 * (`rules_to_suppress`, the format `NagSuppressions.addResourceSuppressions` writes,
 * https://github.com/cdklabs/cdk-nag#suppressing-a-rule). Suppressions apply to Shoal's own
 * resources only, never stack-wide: a user's resources next to Shoal keep every finding.
 */
import { AspectPriority, Aspects, CfnResource } from "aws-cdk-lib";
import type { IConstruct } from "constructs";

/** One accepted finding: the rule, why, and (for granular rules) which findings it covers. */
export interface NagSuppression {
  /** Rule id, e.g. "AwsSolutions-IAM5". */
  id: string;
  /** Why the finding is accepted (cdk-nag wants at least 10 characters). */
  reason: string;
  /** Finding ids (`Resource::…`, `Policy::…`) or `{ regex: "/…/flags" }` they must match. */
  appliesTo?: Array<string | { regex: string }>;
}

type CfnRule = {
  id: string;
  reason: string;
  applies_to?: NagSuppression["appliesTo"];
  is_reason_encoded?: true;
};

/** cdk-nag's metadata form of one suppression (a reason beyond Latin-1 goes base64-encoded). */
function toCfn({ id, reason, appliesTo }: NagSuppression): CfnRule {
  const wide = [...reason].some((c) => (c.codePointAt(0) ?? 0) > 255);
  return {
    id,
    reason: wide ? Buffer.from(reason).toString("base64") : reason,
    ...(appliesTo ? { applies_to: appliesTo } : {}),
    ...(wide ? { is_reason_encoded: true as const } : {}),
  };
}

/** Adds `rules` to the `cdk_nag` metadata of `resource`, once each. */
function addRules(resource: CfnResource, rules: NagSuppression[]): void {
  const current = (resource.getMetadata("cdk_nag") as { rules_to_suppress?: CfnRule[] })
    ?.rules_to_suppress;
  const all = [...(current ?? []), ...rules.map(toCfn)];
  const unique = [...new Set(all.map((r) => JSON.stringify(r)))].map((r) => JSON.parse(r));
  resource.addMetadata("cdk_nag", { rules_to_suppress: unique });
}

/**
 * Suppresses `rules` on every CloudFormation resource under `scope`: those there now, and those
 * CDK adds later (overflow IAM policies are split off at synthesis), through a mutating aspect
 * that runs before cdk-nag's checks.
 */
export function suppressNag(scope: IConstruct, rules: NagSuppression[]): void {
  const apply = (node: IConstruct) => {
    if (node instanceof CfnResource) addRules(node, rules);
  };
  for (const node of scope.node.findAll()) apply(node);
  Aspects.of(scope).add({ visit: apply }, { priority: AspectPriority.MUTATING });
}

/**
 * Where an ARN-addressed call goes: the region (and account) an ARN names. AWS serves a state
 * machine or a function only from the regional endpoint of its own region, whatever the
 * caller's AWS_REGION, so STEP_FUNCTIONS and LAMBDA tasks call the ARN's region (the clients
 * come from lib/aws/clients.ts `sfnIn`/`lambdaIn`). The account does not change the endpoint:
 * a call to another account's resource is signed with the worker's own credentials, which
 * that account must allow (docs/workflows.md).
 */

/** The parts of an ARN that decide where a call goes (AWS general reference, "ARN format"). */
export interface ArnPlace {
  /** `aws`, `aws-cn`, `aws-us-gov`, … */
  partition: string;
  /** `states`, `lambda`, … */
  service: string;
  /** The region (`eu-west-1`); "" for global resources. */
  region: string;
  /** The 12-digit account id; "" when the ARN has none. */
  account: string;
}

const ARN = /^arn:([^:]+):([^:]+):([^:]*):([^:]*):/;

/** The partition, service, region and account of `text`, or undefined when it is not an ARN. */
export function parseArn(text: string): ArnPlace | undefined {
  const m = ARN.exec(text);
  if (!m) return undefined;
  return {
    partition: m[1] as string,
    service: m[2] as string,
    region: m[3] as string,
    account: m[4] as string,
  };
}

/**
 * The region a STEP_FUNCTIONS or LAMBDA task's calls go to: the region of its ARN, or undefined
 * for the worker's own (AWS_REGION). Only a full ARN carries a region: a Lambda function named
 * by name, `name:alias` or partial ARN (`123456789012:function:name`) is the worker region's.
 */
export function callRegion(target: string): string | undefined {
  const region = parseArn(target)?.region;
  return region ? region : undefined;
}

/**
 * One line saying where a task's calls go, for renderings and dry runs: "calls Step Functions
 * in eu-west-1, account 123456789012 (from the ARN)", or "… in the worker's region (AWS_REGION)".
 * @param service the service's name in the sentence ("Step Functions", "Lambda").
 */
export function callPlaceLine(service: string, target: string): string {
  const arn = parseArn(target);
  const account = arn?.account || /^(\d{12}):function:/.exec(target)?.[1];
  const whose = account ? `, account ${account}` : "";
  return arn?.region
    ? `calls ${service} in ${arn.region}${whose} (from the ARN)`
    : `calls ${service} in the worker's region (AWS_REGION)${whose}`;
}

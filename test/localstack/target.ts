/**
 * Finds the Shoal deployment the LocalStack suite runs against: LocalStack's health endpoint
 * first (1 s timeout), then the stack's `ApiUrl` output through CloudFormation DescribeStacks
 * at the same endpoint. Either missing is not a failure: the answer then carries the one line
 * that says why the suite is skipped and what to run.
 */
import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";

/** The deployment under test, or why there is none. Plain data (vitest `provide` needs it). */
export interface LocalStackTarget {
  /** LocalStack's gateway, without a trailing slash (`LOCALSTACK_ENDPOINT`). */
  endpoint: string;
  /** Region the stack was deployed to (`AWS_REGION`, default us-east-1). */
  region: string;
  /** Stack name (`STACK`, default Shoal; deploy.sh uses the same variable). */
  stack: string;
  /** The stack's `ApiUrl` output (a function URL on LocalStack); absent when skipping. */
  apiUrl?: string;
  /** One line saying why the suite is skipped and what to run; absent when `apiUrl` is set. */
  skip?: string;
}

/** How long the health probe waits (ms): LocalStack answers locally or not at all. */
export const HEALTH_TIMEOUT_MS = 1_000;
/** How long DescribeStacks may take (ms). */
const DESCRIBE_TIMEOUT_MS = 10_000;

/**
 * Probes LocalStack and reads the stack's outputs. Never throws: every failure becomes
 * `skip`. Reads `LOCALSTACK_ENDPOINT`, `AWS_REGION`/`AWS_DEFAULT_REGION` and `STACK` from
 * `env`; talks to LocalStack only, with its static test credentials.
 */
export async function findTarget(env: NodeJS.ProcessEnv): Promise<LocalStackTarget> {
  const endpoint = (env.LOCALSTACK_ENDPOINT ?? "http://localhost:4566").replace(/\/+$/, "");
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
  const stack = env.STACK ?? "Shoal";
  const base = { endpoint, region, stack };
  try {
    const res = await fetch(`${endpoint}/_localstack/health`, {
      signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  } catch {
    return {
      ...base,
      skip: `LocalStack is not running at ${endpoint}: start it with \`npm run localstack:up && npm run localstack:deploy\` (needs Docker and LOCALSTACK_AUTH_TOKEN); skipping`,
    };
  }
  const notDeployed = (why: string): LocalStackTarget => ({
    ...base,
    skip: `LocalStack answers at ${endpoint} but stack ${stack} is not deployed (${why}): run \`npm run localstack:deploy\`; skipping`,
  });
  const cfn = new CloudFormationClient({
    endpoint,
    region,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
  try {
    const out = await cfn.send(new DescribeStacksCommand({ StackName: stack }), {
      abortSignal: AbortSignal.timeout(DESCRIBE_TIMEOUT_MS),
    });
    const s = out.Stacks?.[0];
    const apiUrl = s?.Outputs?.find((o) => o.OutputKey === "ApiUrl")?.OutputValue;
    if (!apiUrl) return notDeployed(`${s?.StackStatus ?? "no stack"}, no ApiUrl output`);
    return { ...base, apiUrl };
  } catch (e) {
    return notDeployed(e instanceof Error ? e.message : String(e));
  } finally {
    cfn.destroy();
  }
}

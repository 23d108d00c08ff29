#!/usr/bin/env bash
# Deploys the Shoal CDK stack (cdk/app.ts) to a running LocalStack with cdklocal, the wrapper
# that points the CDK CLI at LocalStack (aws-cdk-local, a dev dependency): `npm run
# localstack:deploy [-- extra cdk deploy args]`. See localstack/README.md.
#
# Environment (all optional):
#   LOCALSTACK_ENDPOINT   LocalStack's gateway (default http://localhost:4566)
#   AWS_REGION            region to deploy to (default us-east-1)
#   STACK                 stack name (default Shoal; passed to the app as -c stackName=...)
#   LOCALSTACK_ACCOUNT    account id LocalStack answers for the test credentials
#                         (default 000000000000)
#   AWS_ENDPOINT_URL_S3   S3 endpoint for asset uploads (default derived from the endpoint)
# Extra arguments go to `cdk deploy` unchanged (for example -c prefix=shoal-dev).
set -euo pipefail

# cdk.json, whose app is `npx tsx cdk/app.ts`, is at the repository root.
cd "$(dirname "${BASH_SOURCE[0]}")/.."

endpoint="${LOCALSTACK_ENDPOINT:-http://localhost:4566}"
endpoint="${endpoint%/}"
region="${AWS_REGION:-${AWS_DEFAULT_REGION:-us-east-1}}"
stack="${STACK:-Shoal}"
account="${LOCALSTACK_ACCOUNT:-000000000000}"
outputs="localstack/outputs.json"

# 1. LocalStack must answer, with the services the stack needs (node, not curl or jq: Node is
#    the one tool this repository already requires).
if ! node --input-type=module - "$endpoint" <<'EOF'
const endpoint = process.argv[2];
const needed = ["cloudformation", "s3", "ssm", "iam", "sts", "dynamodb", "sqs", "lambda", "events", "logs"];
try {
  const res = await fetch(`${endpoint}/_localstack/health`, { signal: AbortSignal.timeout(3000) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const services = (await res.json()).services ?? {};
  const missing = needed.filter((s) => !(s in services) || services[s] === "disabled");
  if (missing.length > 0) {
    console.error(
      `LocalStack at ${endpoint} runs without ${missing.join(", ")}: check SERVICES in localstack/docker-compose.yml (LOCALSTACK_SERVICES).`,
    );
    process.exit(1);
  }
} catch (e) {
  console.error(
    `LocalStack does not answer at ${endpoint}/_localstack/health (${e?.cause?.code ?? e?.message ?? e}).`,
  );
  console.error(
    "Start it with `npm run localstack:up` (needs Docker and LOCALSTACK_AUTH_TOKEN; see localstack/README.md), or set LOCALSTACK_ENDPOINT.",
  );
  process.exit(1);
}
EOF
then
  exit 1
fi

# 2. Credentials and endpoints for LocalStack only. A profile or session token from the shell
#    must never send this deployment to a real AWS account.
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_PROFILE
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
export AWS_REGION="$region" AWS_DEFAULT_REGION="$region"
export AWS_ENDPOINT_URL="$endpoint"
# cdklocal 3 insists on AWS_ENDPOINT_URL_S3 whenever AWS_ENDPOINT_URL is set, with an `s3.`
# host so that asset uploads are recognised as S3 (aws-cdk-local README, "Version support").
# On this machine that is LocalStack's s3.localhost.localstack.cloud (public DNS: 127.0.0.1);
# elsewhere, the endpoint itself with path-style bucket addressing.
scheme="${endpoint%%://*}"
hostport="${endpoint#*://}"
hostport="${hostport%%/*}"
host="${hostport%%:*}"
port="${hostport##*:}"
[[ "$port" == "$hostport" ]] && port=4566
case "$host" in
  localhost | 127.0.0.1 | localhost.localstack.cloud)
    export AWS_ENDPOINT_URL_S3="${AWS_ENDPOINT_URL_S3:-$scheme://s3.localhost.localstack.cloud:$port}"
    ;;
  *)
    export AWS_ENDPOINT_URL_S3="${AWS_ENDPOINT_URL_S3:-$endpoint}"
    export AWS_S3_FORCE_PATH_STYLE="${AWS_S3_FORCE_PATH_STYLE:-1}"
    ;;
esac
# cdklocal (for aws-cdk >= 2.177) drops every other AWS_* variable unless allow-listed.
export AWS_ENVAR_ALLOWLIST="${AWS_ENVAR_ALLOWLIST:+$AWS_ENVAR_ALLOWLIST,}AWS_REGION,AWS_DEFAULT_REGION,AWS_ACCESS_KEY_ID,AWS_SECRET_ACCESS_KEY"

# 3. Bootstrap (idempotent): the CDK staging bucket, roles and version parameter. Naming the
#    environment skips synthesising the app just to find it.
echo "cdklocal bootstrap aws://$account/$region (LocalStack at $endpoint)"
npx cdklocal bootstrap "aws://$account/$region"

# 4. Deploy. LocalStack's free plan has no API Gateway HTTP API, hence the function URL;
#    deletion protection off, so that a reset or `cdklocal destroy` is not refused.
ctx=(-c apiMode=functionUrl -c deletionProtection=false)
if [[ -n "${STACK:-}" ]]; then
  ctx+=(-c "stackName=$STACK")
fi
echo "cdklocal deploy $stack"
npx cdklocal deploy "$stack" --require-approval never "${ctx[@]}" --outputs-file "$outputs" "$@"

# 5. Where the API is, and how to use it.
api_url="$(node -e '
const out = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
process.stdout.write(out[process.argv[2]]?.ApiUrl ?? "");
' "$outputs" "$stack")"
if [[ -z "$api_url" ]]; then
  echo "Deployed, but $outputs has no ApiUrl for stack $stack." >&2
  exit 1
fi
cat <<EOF

Shoal is deployed on LocalStack (stack $stack, region $region).
  API: $api_url   (outputs in $outputs)

Point the CLI at it (it signs requests to function URLs: give it LocalStack's test credentials):
  export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=$region
  SHOAL_ENDPOINT=$api_url npx shoal apply -f examples/etl-report.yaml
  SHOAL_ENDPOINT=$api_url npx shoal run etl-report --wait
or let the CLI read and remember the stack's outputs:
  AWS_ENDPOINT_URL=$endpoint npx shoal config from-stack $stack

End-to-end suite against this deployment: npm run test:localstack
EOF

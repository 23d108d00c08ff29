/**
 * `shoal config from-stack|show|clear`: the CLI's own settings file (cli-config.ts). `from-stack`
 * reads a deployed stack's outputs (CloudFormation DescribeStacks, API reference) so that
 * `shoal workflows` afterwards talks to that deployment, signed as its ApiAuth output says.
 */
import { DescribeStacksCommand, type Output } from "@aws-sdk/client-cloudformation";
import type { Command } from "commander";
import { createAwsClients } from "../../aws/clients.js";
import {
  AUTH_MODES,
  type AuthMode,
  type CliSettings,
  type ConfigFile,
  configFilePath,
  deleteConfigFile,
  type Setting,
  saveConfigFile,
} from "../cli-config.js";
import type { CliContext } from "../context.js";
import { CliError, UsageError } from "../errors.js";
import { table, toJson } from "../format.js";
import { outputOption, TABLE_OR_JSON } from "../options.js";
import { detectAwsHost } from "../signing.js";

/** Stack outputs `from-stack` reads (cdk/shoal.ts); ApiUrl is the one a Shoal stack must have. */
export const STACK_OUTPUTS = {
  ApiUrl: "endpoint",
  ApiAuth: "auth",
  Region: "region",
  Prefix: "prefix",
  EventBusName: "eventBus",
  TaskLogGroup: "taskLogGroup",
  DashboardUrl: "dashboardUrl",
} as const;

/** Registers `config from-stack`, `config show` and `config clear`. */
export function registerConfig(program: Command, ctx: CliContext): void {
  const config = program
    .command("config")
    .description("where the CLI finds Shoal: save a deployed stack's settings, show or clear them");

  config
    .command("from-stack")
    .description("save the API endpoint and auth of a deployed Shoal stack to the config file")
    .argument("<stack>", "CloudFormation stack name or id, e.g. Shoal")
    .option(
      "--region <region>",
      "the stack's region (env AWS_REGION, AWS_DEFAULT_REGION, else the profile's)",
    )
    .option(
      "--profile <name>",
      "AWS profile to read the stack with; saved for later commands (env AWS_PROFILE)",
    )
    .action(async (stack: string) => {
      await fromStack(ctx, stack);
    });

  config
    .command("show")
    .description("print each resolved setting and where it comes from (flag, env, file, default)")
    .addOption(outputOption(TABLE_OR_JSON))
    .action((opts: { output: string }) => {
      show(ctx, ctx.settings(), opts.output);
    });

  config
    .command("clear")
    .description("remove the config file")
    .action(async () => {
      const path = configFilePath(ctx.env);
      ctx.out((await deleteConfigFile(path)) ? `removed ${path}` : `no config file at ${path}`);
    });
}

/**
 * Reads `stack`'s outputs and saves them. Region: --region, AWS_REGION, AWS_DEFAULT_REGION,
 * else the SDK's (the profile's region). Profile: --profile, else AWS_PROFILE.
 * @throws UsageError without a region; CliError when the stack is missing ("stack S not found
 *   in R"), has no ApiUrl output (not a Shoal stack), or cannot be read.
 */
async function fromStack(ctx: CliContext, stack: string): Promise<void> {
  const flags = ctx.flags();
  const region = flags.region || ctx.env.AWS_REGION || ctx.env.AWS_DEFAULT_REGION || undefined;
  const profile = flags.profile || ctx.env.AWS_PROFILE || undefined;
  // No endpoints here: AWS_ENDPOINT_URL(_CLOUDFORMATION) apply through the SDK's own chain.
  const clients = createAwsClients({
    endpoints: {},
    ...(region ? { region } : {}),
    ...(profile ? { profile } : {}),
  });
  const cf = await clients.cloudFormation();
  let outputs: Map<string, string>;
  let stackName: string;
  let where: string;
  try {
    try {
      where = await cf.config.region();
    } catch {
      throw new UsageError(
        `no AWS region to look for stack ${stack} in: pass --region or set AWS_REGION`,
      );
    }
    let found: { StackName?: string; Outputs?: Output[] } | undefined;
    try {
      found = (await cf.send(new DescribeStacksCommand({ StackName: stack }))).Stacks?.[0];
    } catch (err) {
      throw describeError(err, stack, where);
    }
    if (!found) throw new CliError(`stack ${stack} not found in ${where}`);
    stackName = found.StackName ?? stack;
    outputs = new Map();
    for (const o of found.Outputs ?? []) {
      if (o.OutputKey && o.OutputValue !== undefined) outputs.set(o.OutputKey, o.OutputValue);
    }
  } finally {
    clients.destroy();
  }

  const saved = toConfig(outputs, { stack: stackName, region: where });
  if (flags.profile) saved.profile = flags.profile;
  const path = configFilePath(ctx.env);
  await saveConfigFile(path, saved);

  ctx.out(`saved stack ${stackName} (${where}) to ${path}`);
  const rows: string[][] = [];
  for (const [key, value] of Object.entries(saved)) {
    if (key !== "stack" && typeof value === "string") rows.push([key, value]);
  }
  ctx.out(indent(table(["SETTING", "VALUE"], rows)));
  // Higher-precedence settings still win over the file: say so rather than surprise later.
  for (const name of ["SHOAL_ENDPOINT", "SHOAL_AUTH"] as const) {
    if (ctx.env[name]) {
      ctx.io.stderr.write(`note: ${name} is set and takes precedence over the saved settings\n`);
    }
  }
}

/**
 * The config of a stack's outputs: ApiUrl (required, trailing slash dropped), ApiAuth (else
 * inferred from the URL's host), Region (else the region the stack was read in), and the
 * optional Prefix, EventBusName, TaskLogGroup and DashboardUrl.
 * @throws CliError without ApiUrl (not a Shoal stack) or with an invalid ApiUrl or ApiAuth.
 */
export function toConfig(
  outputs: ReadonlyMap<string, string>,
  where: { stack: string; region: string },
): ConfigFile {
  const apiUrl = outputs.get("ApiUrl");
  if (!apiUrl) {
    throw new CliError(
      `stack ${where.stack} in ${where.region} has no ApiUrl output: it is not a Shoal stack`,
    );
  }
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new CliError(`stack ${where.stack}: output ApiUrl '${apiUrl}' is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new CliError(`stack ${where.stack}: output ApiUrl '${apiUrl}' is not an http(s) URL`);
  }
  const endpoint = apiUrl.replace(/\/+$/, "");
  const rawAuth = outputs.get("ApiAuth");
  let auth: AuthMode;
  if (rawAuth !== undefined) {
    const hit = AUTH_MODES.find((m) => m === rawAuth.toLowerCase());
    if (!hit) {
      throw new CliError(
        `stack ${where.stack}: output ApiAuth is '${rawAuth}', expected one of ${AUTH_MODES.join(", ")}`,
      );
    }
    auth = hit;
  } else {
    auth = detectAwsHost(endpoint) ? "iam" : "none";
  }
  const config: ConfigFile = {
    endpoint,
    auth,
    region: outputs.get("Region") || where.region,
    stack: where.stack,
  };
  for (const key of ["Prefix", "EventBusName", "TaskLogGroup", "DashboardUrl"] as const) {
    const value = outputs.get(key);
    if (value) config[STACK_OUTPUTS[key]] = value;
  }
  return config;
}

/** A DescribeStacks failure as the user can act on it. */
function describeError(err: unknown, stack: string, region: string): CliError {
  const e = err as { name?: string; message?: string };
  const message = e.message ?? String(err);
  // CloudFormation answers a missing stack with ValidationError "Stack with id X does not exist".
  if (e.name === "ValidationError" && /does not exist/i.test(message)) {
    return new CliError(`stack ${stack} not found in ${region}`, { cause: err });
  }
  if (e.name === "CredentialsProviderError" || /could not load credentials/i.test(message)) {
    return new CliError(
      `no AWS credentials found for reading stack ${stack}: set AWS_PROFILE or ` +
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or run `aws sso login`",
      { cause: err },
    );
  }
  if (e.name === "AccessDenied" || e.name === "AccessDeniedException") {
    return new CliError(
      `not allowed to read stack ${stack} in ${region} (${message}): the caller needs cloudformation:DescribeStacks`,
      { cause: err },
    );
  }
  return new CliError(`cannot read stack ${stack} in ${region}: ${e.name ?? "Error"}: ${message}`, {
    cause: err,
  });
}

/** `config show`: one row per setting with its source; the token only as "set". */
function show(ctx: CliContext, s: CliSettings, output: string): void {
  const file = s.file.config ?? {};
  if (output === "JSON") {
    ctx.out(
      toJson({
        file: { path: s.file.path, exists: s.file.config !== undefined, applies: s.file.applies },
        endpoint: s.endpoint,
        auth: s.auth,
        region: s.region ?? null,
        service: s.service,
        profile: s.profile ?? null,
        token: s.token ? "set" : null,
        ...(s.file.applies ? deploymentInfo(file) : {}),
      }),
    );
    return;
  }
  const rows: string[][] = [
    ["endpoint", s.endpoint.value, source(s.endpoint)],
    ["auth", s.auth.value, source(s.auth, "inferred from the endpoint host")],
    s.region
      ? ["region", s.region.value, source(s.region)]
      : ["region", "-", "none (pass --region or set AWS_REGION)"],
  ];
  if (s.auth.value === "iam") rows.push(["service", s.service.value, source(s.service)]);
  rows.push(
    s.profile
      ? ["profile", s.profile.value, source(s.profile)]
      : ["profile", "-", "none (the AWS default credential chain)"],
  );
  if (s.token) rows.push(["token", "(set)", "env (SHOAL_TOKEN)"]);
  if (s.file.applies) {
    for (const [key, value] of Object.entries(deploymentInfo(file)))
      rows.push([key, value, "file"]);
  }
  ctx.out(table(["SETTING", "VALUE", "SOURCE"], rows));
  ctx.out(`config file: ${s.file.path}${s.file.config ? "" : " (none)"}`);
  if (!s.file.applies && file.endpoint) {
    ctx.out(
      `note: the config file's settings belong to ${file.endpoint}; ${s.endpoint.origin} names another endpoint, so they are not used`,
    );
  }
}

function deploymentInfo(file: ConfigFile): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ["stack", "prefix", "eventBus", "taskLogGroup", "dashboardUrl"] as const) {
    const value = file[key];
    if (value) out[key] = value;
  }
  return out;
}

/** `flag (--region)`, `env (AWS_REGION)`, `file`, `endpoint (host name)`, `default`. */
function source(setting: Setting<unknown>, defaultWhy?: string): string {
  switch (setting.source) {
    case "flag":
    case "env":
      return `${setting.source} (${setting.origin})`;
    case "endpoint":
      return "endpoint (host name)";
    case "file":
      return "file";
    case "default":
      return defaultWhy ? `default (${defaultWhy})` : "default";
  }
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

/**
 * Which secret sources a worker uses, from its environment:
 * - `SHOAL_SECRETS_SOURCES`: a comma-separated list of `env` (SHOAL_SECRET_<NAME> variables,
 *   env-source.ts), `file` (the file named by SHOAL_SECRETS_FILE, file-source.ts) and `aws`
 *   (Secrets Manager, and SSM Parameter Store for `ssm:` names); tried in that order. Unset:
 *   `aws` (a deployed stack). `shoal standalone` sets `env,file` for its workers.
 * - `SHOAL_SECRETS_FILE`: the secrets file (standalone's `--secrets-file`).
 */
import type { SecretName } from "../core/secret-references.js";
import { CachedSecretSource } from "./cached-source.js";
import { AwsRoutedSecretSource, ChainSecretSource } from "./chain-source.js";
import { EnvSecretSource } from "./env-source.js";
import { FileSecretSource } from "./file-source.js";
import type { SecretSource } from "./secret-source.js";

/** The variables of this file (not SHOAL_SECRET_…, which hold secrets themselves). */
export const SECRETS_ENV = {
  sources: "SHOAL_SECRETS_SOURCES",
  file: "SHOAL_SECRETS_FILE",
} as const;

/** The AWS clients the `aws` source uses (lib/aws/clients.ts; built on first use). */
export interface SecretClients {
  secretsManager(): Promise<import("@aws-sdk/client-secrets-manager").SecretsManagerClient>;
  ssm(): Promise<import("@aws-sdk/client-ssm").SSMClient>;
}

/**
 * A source loaded on first use: the AWS adapters import their SDK packages, which standalone
 * never needs to load.
 */
class LazySource implements SecretSource {
  private loaded: Promise<SecretSource> | undefined;
  constructor(
    private readonly load: () => Promise<SecretSource>,
    private readonly describe: (name: SecretName) => string,
  ) {}

  async get(name: SecretName): Promise<string | undefined> {
    this.loaded ??= this.load();
    return (await this.loaded).get(name);
  }

  where(name: SecretName): string {
    return this.describe(name);
  }
}

/** Secrets Manager and SSM behind a 1-minute cache (cached-source.ts). */
export function awsSecretSource(
  clients: SecretClients,
  now: () => number = Date.now,
): SecretSource {
  const sm = new LazySource(
    async () => {
      const { SecretsManagerSource } = await import("./secrets-manager-source.js");
      return new SecretsManagerSource(() => clients.secretsManager());
    },
    (n) => `Secrets Manager secret ${n.id}`,
  );
  const ssm = new LazySource(
    async () => {
      const { SsmParameterSource } = await import("./ssm-source.js");
      return new SsmParameterSource(() => clients.ssm());
    },
    (n) => `SSM parameter ${n.id}`,
  );
  return new CachedSecretSource(new AwsRoutedSecretSource(sm, ssm), now);
}

/**
 * The worker's secret source as its environment configures it (see the file's comment).
 * @param clients for the `aws` source; without them `aws` is left out.
 * @throws Error naming SHOAL_SECRETS_SOURCES when it lists an unknown source.
 */
export function secretSourceFromEnv(env: NodeJS.ProcessEnv, clients?: SecretClients): SecretSource {
  const raw = env[SECRETS_ENV.sources]?.trim() || "aws";
  const kinds = raw.split(",").map((s) => s.trim());
  const sources: SecretSource[] = [];
  for (const kind of ["env", "file", "aws"] as const) {
    if (!kinds.includes(kind)) continue;
    if (kind === "env") sources.push(new EnvSecretSource(env));
    const file = env[SECRETS_ENV.file];
    if (kind === "file" && file) sources.push(new FileSecretSource(file));
    if (kind === "aws" && clients) sources.push(awsSecretSource(clients));
  }
  const unknown = kinds.filter((k) => k !== "env" && k !== "file" && k !== "aws");
  if (unknown.length > 0) {
    throw new Error(
      `${SECRETS_ENV.sources} must list env, file and/or aws, got '${unknown.join(",")}'`,
    );
  }
  return sources.length === 1 ? (sources[0] as SecretSource) : new ChainSecretSource(sources);
}

/** Combinations of secret sources: tried in order, or routed by where a name lives on AWS. */
import type { SecretName } from "../core/secret-references.js";
import type { SecretSource } from "./secret-source.js";

/** Asks each source in turn; the first that has the secret wins (standalone: environment, then file). */
export class ChainSecretSource implements SecretSource {
  constructor(private readonly sources: readonly SecretSource[]) {}

  async get(name: SecretName): Promise<string | undefined> {
    for (const s of this.sources) {
      const value = await s.get(name);
      if (value !== undefined) return value;
    }
    return undefined;
  }

  where(name: SecretName): string {
    return this.sources.length === 0
      ? "no secret source is configured on this worker"
      : this.sources.map((s) => s.where(name)).join(", ");
  }
}

/** `ssm:` names to Parameter Store, the others to Secrets Manager (AWS). */
export class AwsRoutedSecretSource implements SecretSource {
  constructor(
    private readonly secretsManager: SecretSource,
    private readonly ssm: SecretSource,
  ) {}

  get(name: SecretName): Promise<string | undefined> {
    return (name.store === "ssm" ? this.ssm : this.secretsManager).get(name);
  }

  where(name: SecretName): string {
    return (name.store === "ssm" ? this.ssm : this.secretsManager).where(name);
  }
}

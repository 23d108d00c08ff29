/**
 * Secrets from AWS Secrets Manager: `GetSecretValue` of the secret name or ARN (its AWSCURRENT
 * version), the `SecretString`, or a `SecretBinary` read as UTF-8 (AWS Secrets Manager API
 * reference, "GetSecretValue"). A missing secret (ResourceNotFoundException) is "not found";
 * any other error (AccessDeniedException, DecryptionFailure, throttling) fails the read.
 * The worker's role needs `secretsmanager:GetSecretValue` on the secret (cdk/secrets.ts).
 */
import { GetSecretValueCommand, type SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { SecretName } from "../core/secret-references.js";
import { SecretReadError, type SecretSource } from "./secret-source.js";

export class SecretsManagerSource implements SecretSource {
  /** @param client the Secrets Manager client of lib/aws/clients.ts (built on first use). */
  constructor(private readonly client: () => Promise<SecretsManagerClient>) {}

  async get(name: SecretName): Promise<string | undefined> {
    const client = await this.client();
    try {
      const out = await client.send(new GetSecretValueCommand({ SecretId: name.id }));
      if (out.SecretString !== undefined) return out.SecretString;
      if (out.SecretBinary !== undefined) return Buffer.from(out.SecretBinary).toString("utf8");
      return undefined;
    } catch (e) {
      const err = e as Error;
      if (err.name === "ResourceNotFoundException") return undefined;
      throw new SecretReadError(
        `secret '${name.full}' could not be read from Secrets Manager: ${err.name}${err.message ? `: ${err.message}` : ""}`,
      );
    }
  }

  where(name: SecretName): string {
    return `Secrets Manager secret ${name.id}`;
  }
}

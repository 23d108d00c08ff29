/**
 * Secrets from AWS Systems Manager Parameter Store: `GetParameter` with `WithDecryption` (a
 * SecureString is decrypted with its KMS key; String and StringList come as they are), AWS
 * Systems Manager API reference, "GetParameter". ParameterNotFound is "not found"; any other
 * error (AccessDeniedException, a KMS denial, throttling) fails the read. The worker's role
 * needs `ssm:GetParameter` on the parameter and `kms:Decrypt` through SSM (cdk/secrets.ts).
 */
import { GetParameterCommand, type SSMClient } from "@aws-sdk/client-ssm";
import type { SecretName } from "../core/secret-references.js";
import { SecretReadError, type SecretSource } from "./secret-source.js";

export class SsmParameterSource implements SecretSource {
  /** @param client the SSM client of lib/aws/clients.ts (built on first use). */
  constructor(private readonly client: () => Promise<SSMClient>) {}

  async get(name: SecretName): Promise<string | undefined> {
    const client = await this.client();
    try {
      const out = await client.send(
        new GetParameterCommand({ Name: name.id, WithDecryption: true }),
      );
      return out.Parameter?.Value;
    } catch (e) {
      const err = e as Error;
      if (err.name === "ParameterNotFound") return undefined;
      throw new SecretReadError(
        `secret '${name.full}' could not be read from SSM Parameter Store: ${err.name}${err.message ? `: ${err.message}` : ""}`,
      );
    }
  }

  where(name: SecretName): string {
    return `SSM parameter ${name.id}`;
  }
}

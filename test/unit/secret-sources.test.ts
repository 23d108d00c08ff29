/**
 * The `SecretSource` contract (lib/secrets/secret-source.ts), one suite run against every
 * adapter: environment variables, the local file, Secrets Manager and SSM Parameter Store.
 * There is no Secrets Manager or SSM emulator here: those two run over aws-sdk-client-mock with
 * a small in-memory store that answers as AWS does (ResourceNotFoundException, ParameterNotFound,
 * AccessDeniedException).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from "@aws-sdk/client-secrets-manager";
import { GetParameterCommand, ParameterNotFound, SSMClient } from "@aws-sdk/client-ssm";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, describe, expect, it } from "vitest";
import { parseSecretName, type SecretName } from "../../lib/core/secret-references.js";
import { CachedSecretSource } from "../../lib/secrets/cached-source.js";
import { ChainSecretSource } from "../../lib/secrets/chain-source.js";
import { EnvSecretSource, secretEnvVariable } from "../../lib/secrets/env-source.js";
import { FileSecretSource } from "../../lib/secrets/file-source.js";
import { resolveSecrets } from "../../lib/secrets/resolve.js";
import { SecretReadError, type SecretSource } from "../../lib/secrets/secret-source.js";
import { SecretsManagerSource } from "../../lib/secrets/secrets-manager-source.js";
import { secretSourceFromEnv } from "../../lib/secrets/sources.js";
import { SsmParameterSource } from "../../lib/secrets/ssm-source.js";

const dir = mkdtempSync(join(tmpdir(), "shoal-secret-sources-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const meta = { $metadata: {} };
const accessDenied = () =>
  Object.assign(new Error("User is not authorized to perform: GetSecretValue"), {
    name: "AccessDeniedException",
  });

function name(n: string): SecretName {
  const p = parseSecretName(n);
  if (typeof p === "string") throw new Error(p);
  return p;
}

/**
 * What every adapter is given: `present` holds `db-password` = "s3cr3t pw" and
 * `app/config` = {"user":"app","password":"p@ss"}; `denied` is a secret it may not read
 * (adapters that cannot be denied return undefined from `denied`).
 */
interface Fixture {
  source: SecretSource;
  /** Prefix of names in this store (`ssm:` for SSM, else empty). */
  prefix: string;
  denied?: string;
}

const SECRETS: Record<string, string> = {
  "db-password": "s3cr3t pw",
  "app/config": JSON.stringify({ user: "app", password: "p@ss" }),
};

function fileFixture(): Fixture {
  const path = join(dir, `secrets-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, `db-password: "s3cr3t pw"\napp/config:\n  user: app\n  password: "p@ss"\n`, {
    mode: 0o600,
  });
  return { source: new FileSecretSource(path), prefix: "" };
}

function envFixture(): Fixture {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(SECRETS)) env[secretEnvVariable(k)] = v;
  return { source: new EnvSecretSource(env), prefix: "" };
}

function secretsManagerFixture(): Fixture {
  const client = new SecretsManagerClient({ region: "us-east-1" });
  const mock = mockClient(client);
  mock.on(GetSecretValueCommand).callsFake((input: { SecretId: string }) => {
    if (input.SecretId === "forbidden") throw accessDenied();
    const v = SECRETS[input.SecretId];
    if (v === undefined) {
      throw new ResourceNotFoundException({ message: "Secrets Manager can't find it", ...meta });
    }
    return { SecretString: v };
  });
  return {
    source: new SecretsManagerSource(async () => client),
    prefix: "",
    denied: "forbidden",
  };
}

function ssmFixture(): Fixture {
  const client = new SSMClient({ region: "us-east-1" });
  const mock = mockClient(client);
  mock.on(GetParameterCommand).callsFake((input: { Name: string; WithDecryption?: boolean }) => {
    // SecureStrings come back encrypted without WithDecryption: the adapter must ask for it.
    if (!input.WithDecryption) return { Parameter: { Name: input.Name, Value: "AQICAH…" } };
    if (input.Name === "forbidden") throw accessDenied();
    const v = SECRETS[input.Name];
    if (v === undefined) throw new ParameterNotFound({ message: "", ...meta });
    return { Parameter: { Name: input.Name, Type: "SecureString", Value: v } };
  });
  return {
    source: new SsmParameterSource(async () => client),
    prefix: "ssm:",
    denied: "forbidden",
  };
}

const ADAPTERS: Array<[string, () => Fixture]> = [
  ["environment variables", envFixture],
  ["secrets file", fileFixture],
  ["Secrets Manager", secretsManagerFixture],
  ["SSM Parameter Store", ssmFixture],
];

describe.each(ADAPTERS)("SecretSource contract: %s", (_label, make) => {
  it("returns the value of a secret it has", async () => {
    const { source, prefix } = make();
    expect(await source.get(name(`${prefix}db-password`))).toBe("s3cr3t pw");
  });

  it("returns undefined for a secret it does not have, and says where it looked", async () => {
    const { source, prefix } = make();
    const n = name(`${prefix}no-such-secret`);
    expect(await source.get(n)).toBeUndefined();
    expect(source.where(n)).toMatch(/\S/);
  });

  it("gives a JSON object secret whole, so that #key picks a field", async () => {
    const { source, prefix } = make();
    const whole = await source.get(name(`${prefix}app/config`));
    expect(JSON.parse(whole ?? "")).toEqual({ user: "app", password: "p@ss" });
    const values = await resolveSecrets([`${prefix}app/config#password`], source);
    expect(values.get(`${prefix}app/config#password`)).toBe("p@ss");
  });

  it("fails a denied read with a SecretReadError naming the secret", async () => {
    const { source, prefix, denied } = make();
    if (!denied) return;
    const err = await source.get(name(`${prefix}${denied}`)).catch((e) => e);
    expect(err).toBeInstanceOf(SecretReadError);
    expect(err.message).toContain(`'${prefix}${denied}'`);
    expect(err.message).toContain("AccessDeniedException");
  });
});

describe("resolveSecrets", () => {
  const source = envFixture().source;
  it("names a missing secret and where it was looked for, never a value", async () => {
    const err = await resolveSecrets(["db-password", "nope"], source).catch((e) => e);
    expect(err).toBeInstanceOf(SecretReadError);
    expect(err.message).toBe(
      "secret 'nope' not found (looked in: environment variable SHOAL_SECRET_NOPE)",
    );
  });
  it("says when #key does not apply", async () => {
    await expect(resolveSecrets(["db-password#user"], source)).rejects.toThrow(
      "secret 'db-password#user': #user needs a JSON object, and secret 'db-password' is not JSON",
    );
    await expect(resolveSecrets(["app/config#nope"], source)).rejects.toThrow(
      "secret 'app/config' has no key 'nope'",
    );
  });
});

describe("the environment adapter's name mapping", () => {
  it("upper-cases and turns every other character into _", () => {
    expect(secretEnvVariable("db-password")).toBe("SHOAL_SECRET_DB_PASSWORD");
    expect(secretEnvVariable("ssm:/prod/db/pw")).toBe("SHOAL_SECRET_SSM__PROD_DB_PW");
    expect(secretEnvVariable("prod/db")).toBe("SHOAL_SECRET_PROD_DB");
  });
});

describe("the file adapter", () => {
  it("refuses a file others can read, naming it, its mode and the fix", async () => {
    const path = join(dir, "open.yaml");
    writeFileSync(path, "a: b\n");
    chmodSync(path, 0o644);
    const err = await new FileSecretSource(path).get(name("a")).catch((e) => e);
    expect(err).toBeInstanceOf(SecretReadError);
    expect(err.message).toBe(
      `secrets file ${path} has mode 0644, which lets other users read or change it; it must be 0600 or stricter: run chmod 600 ${path}`,
    );
    chmodSync(path, 0o400);
    expect(await new FileSecretSource(path).get(name("a"))).toBe("b");
  });
  it("reads JSON too, takes numbers as text, and never quotes the file in a parse error", async () => {
    const path = join(dir, "s.json");
    writeFileSync(path, '{"port": 5432, "pw": "x"}', { mode: 0o600 });
    expect(await new FileSecretSource(path).get(name("port"))).toBe("5432");
    writeFileSync(path, "pw: [unclosed s3cr3t", { mode: 0o600 });
    const err = await new FileSecretSource(path).get(name("pw")).catch((e) => e);
    expect(err.message).toMatch(/is not valid YAML or JSON/);
    expect(err.message).not.toContain("s3cr3t");
  });
  it("sees edits at the next read", async () => {
    const path = join(dir, "edit.yaml");
    writeFileSync(path, "k: one\n", { mode: 0o600 });
    const s = new FileSecretSource(path);
    expect(await s.get(name("k"))).toBe("one");
    writeFileSync(path, "k: two\n");
    expect(await s.get(name("k"))).toBe("two");
  });
});

describe("the cache in front of AWS", () => {
  it("reuses a value for a minute, never keeps a miss or a failure", async () => {
    let calls = 0;
    let value: string | undefined;
    let fail = false;
    const inner: SecretSource = {
      get: async () => {
        calls++;
        if (fail) throw new SecretReadError("denied");
        return value;
      },
      where: () => "inner",
    };
    let t = 0;
    const cached = new CachedSecretSource(inner, () => t);
    const n = name("x");
    expect(await cached.get(n)).toBeUndefined();
    value = "v1";
    expect(await cached.get(n)).toBe("v1");
    value = "v2";
    t = 59_999;
    expect(await cached.get(n)).toBe("v1");
    t = 60_000;
    expect(await cached.get(n)).toBe("v2");
    expect(calls).toBe(3);
    fail = true;
    t = 200_000;
    await expect(cached.get(n)).rejects.toThrow("denied");
    fail = false;
    expect(await cached.get(n)).toBe("v2");
  });
});

describe("secretSourceFromEnv", () => {
  it("standalone's env,file: the environment first, then the file", async () => {
    const path = join(dir, "chain.yaml");
    writeFileSync(path, "a: from-file\nb: from-file\n", { mode: 0o600 });
    const s = secretSourceFromEnv({
      SHOAL_SECRETS_SOURCES: "env,file",
      SHOAL_SECRETS_FILE: path,
      SHOAL_SECRET_A: "from-env",
    });
    expect(s).toBeInstanceOf(ChainSecretSource);
    expect(await s.get(name("a"))).toBe("from-env");
    expect(await s.get(name("b"))).toBe("from-file");
    expect(s.where(name("c"))).toBe(`environment variable SHOAL_SECRET_C, secrets file ${path}`);
  });
  it("refuses an unknown source", () => {
    expect(() => secretSourceFromEnv({ SHOAL_SECRETS_SOURCES: "env,vault" })).toThrow(
      "SHOAL_SECRETS_SOURCES must list env, file and/or aws, got 'vault'",
    );
  });
});

/**
 * How a `shoal worker` or `shoal sweeper` finds the standalone it joins
 * (lib/standalone/worker-process.ts loadEndpointsFile): `--data-dir DIR` reads DIR/endpoints.env,
 * nothing configured reads ./.shoal/endpoints.env (or SHOAL_ENV_FILE), and with nothing at all
 * the user is told what to do instead of the SDK's "Region is missing". Also standalone's banner,
 * which prints the exact commands for its data directory and port.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envFileLine, formatEnvFile } from "../../lib/standalone/env-file.js";
import { banner } from "../../lib/standalone/standalone.js";
import { dataOfOtherBackend } from "../../lib/standalone/storage-backend.js";
import { loadEndpointsFile, NoConfigurationError } from "../../lib/standalone/worker-process.js";
import { runCli } from "../helpers/cli-run.js";

const NOWHERE = join(tmpdir(), "shoal-no-such-dir");

function dataDirWithEnvFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "shoal-join-"));
  writeFileSync(
    join(dir, "endpoints.env"),
    "AWS_REGION=us-east-1\nAWS_ENDPOINT_URL_SQS=http://127.0.0.1:4566\nSHOAL_PREFIX=mine\n",
  );
  return dir;
}

describe("joining a standalone", () => {
  it("endpoints.env carries any data directory back intact: '#', spaces, quotes, '$'", () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-join-"));
    const values = {
      SHOAL_DATA_DIR: "/tmp/my dir/#1",
      A: `it's "quoted"`,
      B: "back\\slash 'and' \"both\"",
      C: "$HOME $X = # ;",
      D: "",
    };
    writeFileSync(join(dir, "endpoints.env"), formatEnvFile(values));
    const env: NodeJS.ProcessEnv = {};
    loadEndpointsFile(dir, env);
    expect(env).toEqual(values);
    expect(() => envFileLine("X", "a\nb")).toThrow("X: a line break cannot be written");
  });

  it("--data-dir DIR reads DIR/endpoints.env, over what the environment says", () => {
    const dir = dataDirWithEnvFile();
    const env: NodeJS.ProcessEnv = { AWS_ENDPOINT_URL_SQS: "http://elsewhere", SHOAL_PREFIX: "x" };
    expect(loadEndpointsFile(dir, env)).toBe(join(dir, "endpoints.env"));
    expect(env).toMatchObject({
      AWS_REGION: "us-east-1",
      AWS_ENDPOINT_URL_SQS: "http://127.0.0.1:4566",
      SHOAL_PREFIX: "mine",
    });
  });

  it("with nothing configured, reads SHOAL_ENV_FILE (or .shoal/endpoints.env) where unset", () => {
    const dir = dataDirWithEnvFile();
    const env: NodeJS.ProcessEnv = {
      SHOAL_ENV_FILE: join(dir, "endpoints.env"),
      SHOAL_PREFIX: "set",
    };
    expect(loadEndpointsFile(undefined, env)).toBe(join(dir, "endpoints.env"));
    expect(env).toMatchObject({
      AWS_ENDPOINT_URL_SQS: "http://127.0.0.1:4566",
      SHOAL_PREFIX: "set",
    });
  });

  it("a deployed stack's environment (a region, no file) is used as it is", () => {
    const env = { SHOAL_ENV_FILE: join(NOWHERE, "endpoints.env"), AWS_REGION: "eu-west-1" };
    expect(loadEndpointsFile(undefined, env)).toBeUndefined();
  });

  it("says what to do when there is no configuration at all, or no endpoints.env in --data-dir", () => {
    const env = {
      SHOAL_ENV_FILE: join(NOWHERE, "endpoints.env"),
      AWS_CONFIG_FILE: join(NOWHERE, "config"),
    };
    expect(() => loadEndpointsFile(undefined, env)).toThrow(NoConfigurationError);
    expect(() => loadEndpointsFile(undefined, env)).toThrow(
      /no AWS region configured\. Next to a 'shoal standalone', pass its data directory: --data-dir DIR/,
    );
    expect(() => loadEndpointsFile(NOWHERE, {})).toThrow(
      `--data-dir ${NOWHERE}: no endpoints.env there. It is written by 'shoal standalone --data-dir ${NOWHERE}' when it starts`,
    );
  });

  it("`shoal worker --data-dir` and `shoal sweeper --data-dir` of a directory without a standalone: usage error", async () => {
    for (const verb of ["worker", "sweeper"]) {
      const r = await runCli([verb, "--data-dir", NOWHERE]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`error: --data-dir ${NOWHERE}: no endpoints.env there`);
    }
  });
});

describe("standalone's banner", () => {
  const base = {
    envFile: "",
    workers: 4,
    scheduler: true,
    retentionDays: 7,
    examples: ["etl-report (3 tasks)"],
  };

  it("with the defaults: plain commands", () => {
    const text = banner({
      ...base,
      apiUrl: "http://localhost:8080",
      dataDir: "/w/.shoal",
      envFile: "/w/.shoal/endpoints.env",
      cwd: "/w",
    });
    expect(text).toContain("more: npx shoal worker --group default");
    expect(text).toContain("Try:  npx shoal run etl-report --wait\n");
    expect(text).not.toContain("sweeper   none here");
  });

  it("another data directory and port: the exact commands, --data-dir and --endpoint included", () => {
    const text = banner({
      ...base,
      apiUrl: "http://localhost:41234",
      dataDir: "/w/sa 2",
      cwd: "/w",
      scheduler: false,
    });
    expect(text).toContain("more: npx shoal worker --data-dir 'sa 2' --group default");
    expect(text).toContain(
      "sweeper   none here (--no-scheduler): npx shoal sweeper --data-dir 'sa 2'",
    );
    expect(text).toContain(
      "Try:  npx shoal run etl-report --wait --endpoint http://localhost:41234",
    );
    // Outside the current directory: the absolute path.
    expect(
      banner({ ...base, apiUrl: "http://localhost:8080", dataDir: "/data/sa", cwd: "/w" }),
    ).toContain("npx shoal worker --data-dir /data/sa --group default");
  });

  it("says which backend keeps the state, and where the other backend's data is", () => {
    const at = { ...base, apiUrl: "http://localhost:8080", dataDir: "/w/.shoal", cwd: "/w" };
    expect(banner(at)).toContain("storage   embedded: DynamoDB and SQS in this process, on SQLite");
    expect(banner(at)).not.toContain("note");
    expect(banner({ ...at, backend: "emulators" })).toContain(
      "storage   emulators: dynalite and fauxqs child processes",
    );
    expect(banner({ ...at, otherBackend: "emulators" })).toContain(
      "note      /w/.shoal holds the data of the emulators backend, which this run does not read: restart with --backend emulators",
    );
  });
});

describe("dataOfOtherBackend", () => {
  it("names the other backend only when the data dir holds its data and not this one's", () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-other-backend-"));
    try {
      expect(dataOfOtherBackend("embedded", dir)).toBeUndefined();
      mkdirSync(join(dir, "dynamodb"));
      expect(dataOfOtherBackend("embedded", dir)).toBe("emulators");
      expect(dataOfOtherBackend("emulators", dir)).toBeUndefined();
      mkdirSync(join(dir, "embedded"));
      expect(dataOfOtherBackend("embedded", dir)).toBeUndefined();
      rmSync(join(dir, "dynamodb"), { recursive: true });
      expect(dataOfOtherBackend("emulators", dir)).toBe("embedded");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

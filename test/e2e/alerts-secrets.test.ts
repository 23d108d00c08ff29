// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * Alert channels whose URL and header values come from secrets, in `shoal standalone --alerts FILE
 * --secrets-file FILE`: the alerts file holds `${secret:NAME}` only; the deliverer reads the
 * values from the secrets file (and SHOAL_SECRET_<NAME>) at each send. The receiver gets the
 * POST at the secret URL with the secret header; a channel naming a missing secret fails each
 * attempt naming the secret, is retried, and ends FAILED; a secret added to the file meanwhile is
 * used by the next attempt. No secret value shows in the API, the logs or the events.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import { type Received, type Receiver, startReceiver } from "../helpers/receiver.js";
import {
  api,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

const HOOK_PATH = "/services/T000/B000/hook-path-from-a-secret";
const TOKEN = "tok-9f8e7d6c5b4a-from-a-secret";
const ENV_PATH = "/from-the-environment-only";

describe("alert channels from secrets in shoal standalone", () => {
  let sa: RunningStandalone;
  let rx: Receiver;
  let base = "";
  let got: Received[] = [];
  let secretsFile = "";
  let secrets: Record<string, string> = {};

  const writeSecrets = () =>
    writeFileSync(
      secretsFile,
      Object.entries(secrets)
        .map(([k, v]) => `${k}: "${v}"`)
        .join("\n"),
      { mode: 0o600 },
    );

  beforeAll(async () => {
    rx = await startReceiver(() => ({ status: 200, body: "ok" }));
    base = rx.url;
    got = rx.got;
    const scratch = mkdtempSync(join(tmpdir(), "shoal-alert-secrets-"));
    secretsFile = join(scratch, "secrets.yaml");
    secrets = { "hooks/ops": `${base}${HOOK_PATH}`, "hooks/token": TOKEN };
    writeSecrets();
    const alertsFile = join(scratch, "alerts.yaml");
    writeFileSync(
      alertsFile,
      [
        "channels:",
        '  ops: { type: webhook, url: "${secret:hooks/ops}", headers: { Authorization: "Bearer ${secret:hooks/token}" } }',
        '  chat: { type: slack, url: "${secret:hooks/env}" }',
        '  later: { type: webhook, url: "${secret:hooks/later}" }',
        "delivery: { attempts: 3, backoffSeconds: [0.3, 2], timeoutSeconds: 2 }",
        "",
      ].join("\n"),
    );
    sa = await startStandaloneProcess({
      dataDir: join(scratch, "data"),
      workers: 2,
      args: ["--alerts", alertsFile, "--secrets-file", secretsFile],
      // Logs on: the test checks they never hold a value.
      env: { SHOAL_QUIET: "false", SHOAL_SECRET_HOOKS_ENV: `${base}${ENV_PATH}` },
    });
  }, 60_000);
  afterAll(async () => {
    await sa?.stop();
    await rx?.close();
  });

  const alertsOf = (id: string, count: number) =>
    until(
      async () => {
        const r = await api(sa.url, "GET", `/v1/instances/${id}`);
        const alerts = (r.body.alerts ?? []) as Array<{ status: string }>;
        return alerts.length === count && alerts.every((a) => a.status !== "PENDING")
          ? r.body
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: `the alerts of ${id} to settle` },
    );

  it("sends to the URL and with the header the secrets hold, and FAILS naming a missing secret", async () => {
    await putWorkflow(sa.url, "secret-alerts", {
      tasks: [{ code: "t", type: "SHELL", command: "echo done" }],
      alerts: [{ on: ["SUCCESS"], channels: ["ops", "chat", "later"] }],
    });
    const id = await startRun(sa.url, "secret-alerts");
    expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
    const body = await alertsOf(id, 3);
    const by = Object.fromEntries(
      (body.alerts as Array<{ channel: string }>).map((a) => [a.channel, a]),
    );
    expect(by.ops).toMatchObject({ status: "SENT", attempts: 1 });
    expect(by.chat).toMatchObject({ status: "SENT", attempts: 1 });
    expect(by.later).toMatchObject({
      status: "FAILED",
      attempts: 3,
      lastError: `channel 'later': secret 'hooks/later' not found (looked in: environment variable SHOAL_SECRET_HOOKS_LATER, secrets file ${secretsFile})`,
    });
    const ops = got.filter((g) => g.path === HOOK_PATH && g.body.instanceId === id);
    expect(ops).toHaveLength(1);
    expect(ops[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(got.filter((g) => g.path === ENV_PATH)).toHaveLength(1);

    const everything = JSON.stringify(body) + sa.output();
    for (const value of [HOOK_PATH, TOKEN, ENV_PATH, base]) {
      expect(everything).not.toContain(value);
    }
    // Logs name the channel and the receiver's host.
    expect(sa.output()).toContain('"target":"webhook (127.0.0.1:');
  }, 60_000);

  it("a secret added to the file meanwhile is used by the next attempt", async () => {
    await putWorkflow(sa.url, "secret-later", {
      tasks: [{ code: "t", type: "SHELL", command: "echo done" }],
      alerts: [{ on: ["SUCCESS"], channels: ["later"] }],
    });
    const id = await startRun(sa.url, "secret-later");
    expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
    // The first attempt fails for want of the secret…
    await until(
      async () => {
        const r = await api(sa.url, "GET", `/v1/instances/${id}`);
        const a = r.body.alerts?.[0] as { attempts: number; lastError?: string } | undefined;
        return a && a.attempts >= 1 && a.lastError?.includes("hooks/later") ? a : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: "a first failed attempt" },
    );
    // …then the file gains it.
    secrets["hooks/later"] = `${base}/later`;
    writeSecrets();
    const body = await alertsOf(id, 1);
    expect(body.alerts[0]).toMatchObject({ channel: "later", status: "SENT" });
    expect(got.filter((g) => g.path === "/later" && g.body.instanceId === id)).toHaveLength(1);
  }, 60_000);
});

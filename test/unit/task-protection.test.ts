/**
 * ECS task scale-in protection of `shoal worker`, against a stand-in for the ECS agent's
 * endpoint: protected while at least one task runs (one request however many overlap),
 * released when idle, renewed while busy, failures logged and never thrown into the task.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskProtection } from "../../lib/standalone/task-protection.js";
import { until } from "../helpers/poll.js";

describe("TaskProtection", () => {
  let server: Server;
  let agentUri: string;
  const calls: Array<{ method: string; url: string; body: unknown }> = [];
  let status = 200;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        calls.push({ method: req.method ?? "", url: req.url ?? "", body: JSON.parse(body) });
        res.writeHead(status, { "content-type": "application/json" });
        res.end(
          status === 200 ? '{"protection":{}}' : '{"error":{"Code":"AccessDeniedException"}}',
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    agentUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/task-id`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("protects while tasks run and releases when the last one ends", async () => {
    calls.length = 0;
    const p = new TaskProtection({ agentUri, minutes: 30 });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const a = p.around(() => gate);
    const b = p.around(() => gate);
    await p.settled();
    expect(calls).toEqual([
      {
        method: "PUT",
        url: "/api/task-id/task-protection/v1/state",
        body: { ProtectionEnabled: true, ExpiresInMinutes: 30 },
      },
    ]);
    release();
    await Promise.all([a, b]);
    await p.settled();
    expect(calls.map((c) => c.body)).toEqual([
      { ProtectionEnabled: true, ExpiresInMinutes: 30 },
      { ProtectionEnabled: false },
    ]);
    p.stop();
  });

  it("renews while busy", async () => {
    calls.length = 0;
    // 0.001 minutes: renewed every 30 ms.
    const p = new TaskProtection({ agentUri, minutes: 0.001 });
    let release: () => void = () => {};
    const task = p.around(
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    await until(async () => calls.length >= 3, { what: "two renewals" });
    release();
    await task;
    await p.settled();
    expect(
      calls.slice(0, -1).every((c) => (c.body as { ProtectionEnabled: boolean }).ProtectionEnabled),
    ).toBe(true);
    expect(calls.at(-1)?.body).toEqual({ ProtectionEnabled: false });
    p.stop();
  });

  it("logs a refused request and still runs the task", async () => {
    calls.length = 0;
    status = 400;
    const logs: string[] = [];
    const p = new TaskProtection({
      agentUri,
      log: (m, f) => logs.push(`${m} ${JSON.stringify(f)}`),
    });
    await expect(p.around(async () => 42)).resolves.toBe(42);
    await p.settled();
    status = 200;
    expect(logs[0]).toMatch(/task scale-in protection not updated .*HTTP 400/);
    // The release is not sent when the agent never took the protection... but it is tried.
    expect(calls.map((c) => c.body)).toEqual([
      { ProtectionEnabled: true, ExpiresInMinutes: 60 },
      { ProtectionEnabled: false },
    ]);
    p.stop();
  });
});

/**
 * Priority under backlog (DolphinScheduler's order): with one task slot busy on a LOW backlog, a
 * HIGH workflow's ready tasks start before the LOW backlog's remaining tasks.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import { api, startStandaloneProcess, waitFinal } from "../helpers/standalone.js";

interface T {
  code: string;
  state: string;
  submittedAt: string;
  startedAt?: string;
}

it("runs a HIGH workflow's tasks before the rest of a LOW backlog with one slot", async () => {
  const sa = await startStandaloneProcess({
    dataDir: mkdtempSync(join(tmpdir(), "shoal-prio-")),
    workers: 1,
  });
  try {
    const wide = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({
        code: `${prefix}${i}`,
        type: "SHELL",
        command: "sleep 0.2",
      }));
    await api(sa.url, "PUT", "/v1/workflows/backlog", { priority: "LOW", tasks: wide(8, "low") });
    await api(sa.url, "PUT", "/v1/workflows/urgent", { priority: "HIGH", tasks: wide(3, "high") });
    const low = (await api(sa.url, "POST", "/v1/workflows/backlog/runs", {})).body
      .instanceId as string;
    await until(
      async () =>
        (await api(sa.url, "GET", `/v1/instances/${low}`)).body.tasks?.some(
          (t: T) => t.state === "RUNNING",
        ),
      { what: "the LOW backlog to start" },
    );
    const high = (await api(sa.url, "POST", "/v1/workflows/urgent/runs", {})).body
      .instanceId as string;
    const [l, h] = await Promise.all([waitFinal(sa.url, low), waitFinal(sa.url, high)]);
    expect(l.state).toBe("SUCCESS");
    expect(h.state).toBe("SUCCESS");
    const highTasks = h.tasks as T[];
    const highDispatched = Math.max(...highTasks.map((t) => Date.parse(t.submittedAt)));
    const lastHighStart = Math.max(...highTasks.map((t) => Date.parse(t.startedAt as string)));
    // LOW tasks that had not started when the HIGH tasks were dispatched: all start after them.
    const laterLow = (l.tasks as T[]).filter(
      (t) => Date.parse(t.startedAt as string) > highDispatched,
    );
    expect(laterLow.length).toBeGreaterThanOrEqual(4);
    for (const t of laterLow)
      expect(Date.parse(t.startedAt as string)).toBeGreaterThan(lastHighStart);
    // One slot: no two tasks ever overlapped.
    const all = [...(l.tasks as T[]), ...highTasks]
      .map((t) => ({
        s: Date.parse(t.startedAt as string),
        e: Date.parse((t as T & { endedAt: string }).endedAt),
      }))
      .sort((a, b) => a.s - b.s);
    for (let i = 1; i < all.length; i++)
      expect(all[i]?.s).toBeGreaterThanOrEqual(all[i - 1]?.e as number);
  } finally {
    await sa.stop();
  }
}, 90_000);

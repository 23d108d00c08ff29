/**
 * At-least-once delivery, end to end: with the test hook that hands every SQS batch to its
 * handler twice at once (dispatcher and worker alike), runs end in the same final state, every
 * task runs exactly once, and the DAG order holds.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  api,
  type RunningStandalone,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

let sa: RunningStandalone;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "shoal-twice-"));
  sa = await startStandaloneProcess({
    dataDir: dir,
    workers: 8,
    env: { SHOAL_TEST_DELIVER_TWICE: "true" },
  });
});
afterAll(async () => {
  await sa?.stop();
});

it("every message delivered twice: each task runs once and the instance ends as it would", async () => {
  // A diamond with fan-out and fan-in, every task recording that it ran.
  const mark = 'echo "$SHOAL_TASK_CODE" >> "$SHOAL_INSTANCE_DIR/ran"';
  const tasks = [
    { code: "root", type: "SHELL", command: mark },
    ...Array.from({ length: 12 }, (_, i) => ({
      code: `mid${i}`,
      type: "SHELL",
      command: mark,
      upstream: ["root"],
    })),
    {
      code: "join",
      type: "SHELL",
      command: mark,
      upstream: Array.from({ length: 12 }, (_, i) => `mid${i}`),
    },
    {
      code: "flaky",
      type: "SHELL",
      retries: 1,
      command: `${mark}; [ "$SHOAL_ATTEMPT" -ge 2 ]`,
      upstream: ["join"],
    },
  ];
  expect((await api(sa.url, "PUT", "/v1/workflows/twice", { tasks })).status).toBe(201);
  const id = (await api(sa.url, "POST", "/v1/workflows/twice/runs", {})).body.instanceId as string;
  const inst = await waitFinal(sa.url, id, 60_000);
  expect(inst.state).toBe("SUCCESS");
  const ran = readFileSync(join(dir, "work", "twice", id, "shared", "ran"), "utf8")
    .trim()
    .split("\n")
    .sort();
  // flaky runs twice by design (one retry); everything else exactly once.
  const expected = [...tasks.map((t) => t.code), "flaky"].sort();
  expect(ran).toEqual(expected);
  for (const t of inst.tasks as Array<{ code: string; attempt: number; state: string }>) {
    expect(t.state).toBe("SUCCESS");
    expect(t.attempt).toBe(t.code === "flaky" ? 2 : 1);
  }
  const byCode = new Map(
    (inst.tasks as Array<{ code: string; startedAt: string; endedAt: string }>).map((t) => [
      t.code,
      t,
    ]),
  );
  for (const t of tasks) {
    for (const up of t.upstream ?? []) {
      expect(Date.parse(byCode.get(up)?.endedAt as string)).toBeLessThanOrEqual(
        Date.parse(byCode.get(t.code)?.startedAt as string),
      );
    }
  }
}, 90_000);

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
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

it("every message delivered twice: logic tasks, a sub-workflow and OUT parameters decide once", async () => {
  const mark = 'echo "$SHOAL_TASK_CODE" >> "$SHOAL_INSTANCE_DIR/ran"';
  const child = { tasks: [{ code: "inner", type: "SHELL", command: mark }] };
  expect((await api(sa.url, "PUT", "/v1/workflows/twice-child", child)).status).toBe(201);
  const tasks = [
    { code: "produce", type: "SHELL", command: `${mark}; echo '\${setValue(route=b)}'` },
    {
      code: "route",
      type: "SWITCH",
      upstream: ["produce"],
      cases: [
        { condition: 'route == "a"', next: "a" },
        { condition: 'route == "b"', next: "b" },
      ],
    },
    { code: "a", type: "SHELL", command: mark, upstream: ["route"] },
    { code: "b", type: "SHELL", command: `${mark}; exit 1`, upstream: ["route"] },
    {
      code: "check",
      type: "CONDITIONS",
      upstream: ["b"],
      successNext: [],
      failedNext: ["sub"],
    },
    { code: "sub", type: "SUB_WORKFLOW", workflow: "twice-child", upstream: ["check"] },
  ];
  expect((await api(sa.url, "PUT", "/v1/workflows/twice-logic", { tasks })).status).toBe(201);
  const id = (await api(sa.url, "POST", "/v1/workflows/twice-logic/runs", {})).body
    .instanceId as string;
  const inst = await waitFinal(sa.url, id, 60_000);
  expect(inst.state).toBe("SUCCESS");
  const states = Object.fromEntries(
    inst.tasks.map((t: { code: string; state: string; attempt: number }) => [
      t.code,
      `${t.state}/${t.attempt}`,
    ]),
  );
  expect(states).toEqual({
    produce: "SUCCESS/1",
    route: "SUCCESS/1",
    a: "SKIPPED/1",
    b: "FAILURE/1",
    check: "SUCCESS/1",
    sub: "SUCCESS/1",
  });
  const ran = readFileSync(join(dir, "work", "twice-logic", id, "shared", "ran"), "utf8")
    .trim()
    .split("\n")
    .sort();
  expect(ran).toEqual(["b", "produce"]);
  // One child instance, its task run once.
  const children = (await api(sa.url, "GET", "/v1/instances?workflow=twice-child")).body.items;
  expect(children).toHaveLength(1);
  expect((await api(sa.url, "GET", `/v1/instances/${children[0].instanceId}`)).body.state).toBe(
    "SUCCESS",
  );
});

/**
 * The `TaskLogs` contract (lib/logs/task-log.ts), run against every implementation: the file
 * store and CloudWatch Logs (over aws-sdk-client-mock and a small in-memory Logs).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  CloudWatchLogsClient,
  CreateLogStreamCommand,
  type CreateLogStreamCommandInput,
  GetLogEventsCommand,
  type GetLogEventsCommandInput,
  InvalidParameterException,
  PutLogEventsCommand,
  type PutLogEventsCommandInput,
  ResourceAlreadyExistsException,
  ResourceNotFoundException,
} from "@aws-sdk/client-cloudwatch-logs";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { statusOf } from "../../lib/api/http.js";
import { RequestError } from "../../lib/core/errors.js";
import { CloudWatchTaskLogs } from "../../lib/logs/cloudwatch-task-log.js";
import { FileTaskLogs } from "../../lib/logs/file-task-log.js";
import type { LogLine, TaskLogKey, TaskLogs } from "../../lib/logs/task-log.js";

const T0 = Date.UTC(2026, 10, 21, 5, 51, 17, 930);
const meta = { $metadata: {} };

/** The three Logs operations, in memory; forward tokens are `f/<index>`. */
function memoryLogs() {
  const streams = new Map<string, Array<{ timestamp: number; message: string }>>();
  const key = (i: { logGroupName?: string; logStreamName?: string }) =>
    `${i.logGroupName}|${i.logStreamName}`;
  return {
    create(i: CreateLogStreamCommandInput) {
      if (streams.has(key(i))) throw new ResourceAlreadyExistsException({ message: "", ...meta });
      streams.set(key(i), []);
      return {};
    },
    put(i: PutLogEventsCommandInput) {
      const list = streams.get(key(i));
      if (!list) throw new ResourceNotFoundException({ message: "", ...meta });
      for (const e of i.logEvents ?? []) {
        if (!e.message) throw new InvalidParameterException({ message: "empty", ...meta });
        list.push({ timestamp: e.timestamp ?? 0, message: e.message });
      }
      return {};
    },
    get(i: GetLogEventsCommandInput) {
      const list = streams.get(key(i));
      if (!list) throw new ResourceNotFoundException({ message: "", ...meta });
      const limit = i.limit ?? 10_000;
      if (i.startFromHead === false) {
        // From the end: the latest events, in time order; backward tokens are `b/<index>`.
        const b =
          i.nextToken === undefined ? ["", String(list.length)] : /^b\/(\d+)$/.exec(i.nextToken);
        if (!b) throw new InvalidParameterException({ message: "token", ...meta });
        const to = Number(b[1]);
        // Short pages while more exist, as the API may return: at most 3 events.
        const from = Math.max(0, to - Math.min(limit, 3));
        return { events: list.slice(from, to), nextBackwardToken: `b/${from}` };
      }
      const m = i.nextToken === undefined ? ["", "0"] : /^f\/(\d+)$/.exec(i.nextToken);
      if (!m) throw new InvalidParameterException({ message: "token", ...meta });
      const from = Number(m[1]);
      const events = list.slice(from, from + limit);
      return { events, nextForwardToken: `f/${from + events.length}` };
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), "shoal-task-logs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const client = new CloudWatchLogsClient({
  region: "eu-west-1",
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
});
const mock = mockClient(client);

const implementations: Array<[string, () => TaskLogs]> = [
  ["FileTaskLogs", () => new FileTaskLogs(mkdtempSync(join(dir, "run-")))],
  [
    "CloudWatchTaskLogs",
    () => {
      const fake = memoryLogs();
      mock.reset();
      mock.on(CreateLogStreamCommand).callsFake((i) => fake.create(i));
      mock.on(PutLogEventsCommand).callsFake((i) => fake.put(i));
      mock.on(GetLogEventsCommand).callsFake((i) => fake.get(i));
      return new CloudWatchTaskLogs({
        logGroupName: "/shoal/tasks",
        client: () => client,
        flushIntervalMs: 10,
        retryBaseMs: 1,
      });
    },
  ],
];

describe.each(implementations)("TaskLogs conformance: %s", (_name, make) => {
  let logs: TaskLogs;
  const key: TaskLogKey = {
    workflow: "hello",
    instanceId: "7683b853",
    code: "extract",
    attempt: 1,
  };

  beforeEach(() => {
    logs = make();
  });

  async function write(k: TaskLogKey, messages: string[], start = T0): Promise<void> {
    const w = logs.open(k);
    messages.forEach((m, i) => {
      w.write(m, start + i);
    });
    await w.close();
  }

  async function readAll(k: TaskLogKey, limit: number, nextToken?: string) {
    const pages: LogLine[][] = [];
    let token = nextToken;
    for (;;) {
      const page = await logs.read(k, {
        limit,
        ...(token !== undefined ? { nextToken: token } : {}),
      });
      expect(page.nextToken).toBeDefined();
      pages.push(page.lines);
      token = page.nextToken;
      if (page.lines.length < limit) return { pages, token: token as string };
    }
  }

  it("reads back what was written, in order, with ISO-8601 UTC timestamps", async () => {
    await write(key, ["extracting us", "done"]);
    const page = await logs.read(key, { limit: 10 });
    expect(page.lines).toEqual([
      { timestamp: "2026-11-21T05:51:17.930Z", message: "extracting us" },
      { timestamp: "2026-11-21T05:51:17.931Z", message: "done" },
    ]);
  });

  it("pages by limit; only the last page is short; every page has a token", async () => {
    const lines = Array.from({ length: 7 }, (_, i) => `line ${i}`);
    await write(key, lines);
    const { pages } = await readAll(key, 3);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((l) => l.message)).toEqual(lines);
  });

  it("reads a log not written yet as empty, with a token that later finds the lines", async () => {
    const first = await logs.read(key, { limit: 5 });
    expect(first.lines).toEqual([]);
    expect(first.nextToken).toBeDefined();
    await write(key, ["started"]);
    const next = await logs.read(key, { limit: 5, nextToken: first.nextToken as string });
    expect(next.lines.map((l) => l.message)).toEqual(["started"]);
  });

  it("follows: at the end the token reads nothing, then the lines written later", async () => {
    await write(key, ["a", "b"]);
    const { token } = await readAll(key, 10);
    const idle = await logs.read(key, { limit: 10, nextToken: token });
    expect(idle.lines).toEqual([]);
    expect(idle.nextToken).toBeDefined();
    await write(key, ["c"], T0 + 100); // a redelivered attempt appends
    const more = await logs.read(key, { limit: 10, nextToken: idle.nextToken as string });
    expect(more.lines.map((l) => l.message)).toEqual(["c"]);
  });

  it("refuses tokens it did not hand out", async () => {
    await write(key, ["a"]);
    for (const bad of ["not-a-token", "-1", "1.5"]) {
      const err = await logs.read(key, { limit: 1, nextToken: bad }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RequestError);
      expect(err).toMatchObject({ code: "ValidationError" });
      expect(statusOf((err as RequestError).code)).toBe(400);
    }
  });

  it("keeps attempts apart", async () => {
    await write(key, ["first try"]);
    await write({ ...key, attempt: 2 }, ["second try"]);
    const one = await logs.read(key, { limit: 10 });
    const two = await logs.read({ ...key, attempt: 2 }, { limit: 10 });
    expect(one.lines.map((l) => l.message)).toEqual(["first try"]);
    expect(two.lines.map((l) => l.message)).toEqual(["second try"]);
  });

  it("writes one line per write: newlines become spaces, an empty line stays a (blank) line", async () => {
    await write(key, ["a\nb", "", "c"]);
    const page = await logs.read(key, { limit: 10 });
    expect(page.lines.map((l) => l.message.trim())).toEqual(["a b", "", "c"]);
  });

  it("tail: the last lines of a long log, oldest first, never its middle", async () => {
    const lines = Array.from({ length: 25 }, (_, i) => `line ${i}`);
    await write(key, lines);
    const tail = await logs.tail(key, 5);
    expect(tail.map((l) => l.message)).toEqual(lines.slice(-5));
    expect(tail[0]?.timestamp).toBe(new Date(T0 + 20).toISOString());
    expect((await logs.tail(key, 100)).map((l) => l.message)).toEqual(lines);
  });

  it("tail: the end of a log larger than a read chunk (about 1 MB)", async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${"x".repeat(40)}`);
    await write(key, lines);
    expect((await logs.tail(key, 20)).map((l) => l.message)).toEqual(lines.slice(-20));
  });

  it("tail: [] for a log not written yet; a short log whole", async () => {
    expect(await logs.tail(key, 5)).toEqual([]);
    await write(key, ["only", ""]);
    expect((await logs.tail(key, 5)).map((l) => l.message.trim())).toEqual(["only", ""]);
    expect(await logs.tail({ ...key, attempt: 2 }, 5)).toEqual([]);
  });

  it("ignores writes after close", async () => {
    const w = logs.open(key);
    w.write("kept", T0);
    await w.close();
    w.write("too late", T0 + 1);
    const page = await logs.read(key, { limit: 10 });
    expect(page.lines.map((l) => l.message)).toEqual(["kept"]);
  });
});

describe("FileTaskLogs tail", () => {
  const key: TaskLogKey = { workflow: "hello", instanceId: "i", code: "c", attempt: 1 };

  it("leaves out a line still being written, and finds lines across read chunks", async () => {
    const logs = new FileTaskLogs(mkdtempSync(join(dir, "tail-")));
    const file = logs.path(key);
    mkdirSync(dirname(file), { recursive: true });
    const long = "y".repeat(300 * 1024); // longer than one read chunk
    writeFileSync(file, `t0\tfirst\nt1\t${long}\nt2\tlast\nt3\thalf a li`);
    expect((await logs.tail(key, 2)).map((l) => l.message)).toEqual([long, "last"]);
    expect((await logs.tail(key, 9)).map((l) => l.timestamp)).toEqual(["t0", "t1", "t2"]);
  });
});

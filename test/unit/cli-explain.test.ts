/**
 * `shoal explain` and the waiting notices of `shoal logs --follow`, against a stub of the API
 * (test/helpers/stub-api.ts).
 */
import { describe, expect, it } from "vitest";
import { notFound, type Seen, useStubApi } from "../helpers/stub-api.js";

const stub = useStubApi();

const LOAD = {
  code: "load",
  type: "SHELL",
  state: "NOT_STARTED",
  reason: "WAITING_FOR_UPSTREAM",
  message: "waiting for upstream 'extract' (RUNNING, attempt 2)",
  facts: { upstream: [{ code: "extract", state: "RUNNING", attempt: 2 }] },
};
const TRAIN = {
  code: "train",
  type: "SHELL",
  state: "DISPATCHED",
  attempt: 1,
  reason: "NO_WORKER",
  message: "no worker has polled worker group 'gpu' in the last 120 s",
  facts: { workerGroup: "gpu", servedBy: "workers", silenceSeconds: 120 },
};

describe("shoal explain", () => {
  it("prints one line per waiting task", async () => {
    stub.reply = () => ({
      status: 200,
      body: { instanceId: "i-1", workflow: "etl", state: "RUNNING", tasks: [LOAD, TRAIN] },
    });
    const res = await stub.shoal(["explain", "i-1"]);
    expect(res).toEqual({
      code: 0,
      stdout:
        "load (NOT_STARTED): waiting for upstream 'extract' (RUNNING, attempt 2)\n" +
        "train (DISPATCHED): no worker has polled worker group 'gpu' in the last 120 s\n",
      stderr: "",
    });
    expect(stub.calls()).toEqual(["GET /v1/instances/i-1/explain"]);
  });

  it("says what holds the whole instance, and when nothing waits", async () => {
    stub.reply = () => ({
      status: 200,
      body: {
        instanceId: "i-1",
        workflow: "etl",
        state: "PAUSED",
        reason: "INSTANCE_PAUSED",
        message: "the instance is PAUSED: nothing starts until it is resumed (shoal resume i-1)",
        tasks: [],
      },
    });
    const res = await stub.shoal(["explain", "i-1"]);
    expect(res.stdout).toBe(
      "instance i-1 (PAUSED): the instance is PAUSED: nothing starts until it is resumed (shoal resume i-1)\n",
    );
    expect(res.stderr).toBe(
      "nothing waits: every task of instance i-1 is running or finished (PAUSED)\n",
    );
  });

  it("one task: its sentence, its reason and the facts behind it", async () => {
    stub.reply = () => ({ status: 200, body: TRAIN });
    const res = await stub.shoal(["explain", "i-1", "train"]);
    expect(res.code).toBe(0);
    expect(res.stdout.split("\n")).toEqual([
      "train (DISPATCHED): no worker has polled worker group 'gpu' in the last 120 s",
      "  reason: NO_WORKER",
      "  workerGroup: gpu",
      "  servedBy: workers",
      "  silenceSeconds: 120",
      "",
    ]);
    expect(stub.calls()).toEqual(["GET /v1/instances/i-1/tasks/train/explain"]);
  });

  it("-o json prints the raw answer; an unknown task is the API's 404 (exit 1)", async () => {
    stub.reply = () => ({ status: 200, body: LOAD });
    const json = await stub.shoal(["explain", "i-1", "load", "-o", "json"]);
    expect(JSON.parse(json.stdout)).toEqual(LOAD);
    stub.reply = () => notFound("workflow 'etl' v1 has no task 'nope'");
    const res = await stub.shoal(["explain", "i-1", "nope"]);
    expect(res).toMatchObject({ code: 1, stderr: "error: workflow 'etl' v1 has no task 'nope'\n" });
  });
});

describe("shoal logs --follow on a task that has not started", () => {
  it("says on stderr what it waits for, again only when that changes, until lines come", async () => {
    let polls = 0;
    const messages = [
      "waiting for upstream 'extract' (RUNNING, attempt 1)",
      "waiting for upstream 'extract' (RUNNING, attempt 1)",
      "no worker has polled worker group 'gpu' in the last 120 s",
    ];
    let explains = 0;
    stub.reply = (req: Seen) => {
      if (req.path.endsWith("/explain")) {
        const message = messages[Math.min(explains++, messages.length - 1)];
        return { status: 200, body: { ...LOAD, message } };
      }
      polls++;
      // Empty pages until the third explain was asked, then two lines and the end.
      if (explains < 3) return { status: 200, body: { lines: [], nextToken: "0" } };
      return {
        status: 200,
        body: { lines: [{ timestamp: "2026-11-21T05:00:01.000Z", message: "loaded" }] },
      };
    };
    const res = await stub.shoal(["logs", "i-1", "load", "--follow"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("2026-11-21T05:00:01.000Z loaded\n");
    // "waiting for upstream" is not doubled into "waiting: waiting for upstream".
    expect(res.stderr).toBe(
      "waiting for upstream 'extract' (RUNNING, attempt 1)\n" +
        "waiting: no worker has polled worker group 'gpu' in the last 120 s\n",
    );
    expect(polls).toBeGreaterThan(3);
  }, 20_000);

  it("without --follow it reads once; a server without explain leaves it quiet", async () => {
    stub.reply = (req: Seen) =>
      req.path.endsWith("/explain")
        ? notFound("no such route")
        : { status: 200, body: { lines: [], nextToken: "0" } };
    const once = await stub.shoal(["logs", "i-1", "load"]);
    expect(once).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(stub.calls()).toEqual([
      "GET /v1/instances/i-1/tasks/load/log",
      "GET /v1/instances/i-1/tasks/load/explain",
    ]);
  });
});

describe("shoal logs with nothing to show says why", () => {
  it("a task that has not started: the explain sentence on stderr, exit 0", async () => {
    stub.reply = (req: Seen) =>
      req.path.endsWith("/explain")
        ? { status: 200, body: LOAD }
        : { status: 200, body: { lines: [], nextToken: "start" } };
    const res = await stub.shoal(["logs", "i-1", "load"]);
    expect(res).toEqual({
      code: 0,
      stdout: "",
      stderr: "waiting for upstream 'extract' (RUNNING, attempt 2)\n",
    });
  });

  it("a task waiting for its retry: the due time, and where the failed attempt's log is", async () => {
    const retry = {
      code: "load",
      type: "SHELL",
      state: "SUBMITTED",
      attempt: 2,
      reason: "RETRY_DUE",
      message: "retry due at 2026-11-21T05:10:00.000Z",
      facts: { dueAt: "2026-11-21T05:10:00.000Z" },
    };
    stub.reply = (req: Seen) =>
      req.path.endsWith("/explain")
        ? { status: 200, body: retry }
        : { status: 200, body: { lines: [], nextToken: "0" } };
    const res = await stub.shoal(["logs", "i-1", "load"]);
    expect(res.stderr).toBe(
      "retry due at 2026-11-21T05:10:00.000Z (attempt 1's log: shoal logs i-1 load --attempt 1)\n",
    );
    // An explicit attempt is not the one explain speaks of: nothing is added.
    stub.requests.length = 0;
    const asked = await stub.shoal(["logs", "i-1", "load", "--attempt", "2"]);
    expect(asked).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(stub.calls()).toEqual(["GET /v1/instances/i-1/tasks/load/log"]);
  });

  it("--follow on a task that never runs ends with the reason, not silently", async () => {
    let over = false;
    let explains = 0;
    stub.reply = (req: Seen) => {
      if (req.path.endsWith("/explain")) {
        explains++;
        const message = over
          ? "did not run: upstream 'b' ended FAILURE"
          : "will not run in this round: upstream 'b' ended FAILURE";
        if (explains >= 1) over = true;
        return { status: 200, body: { ...LOAD, reason: "UPSTREAM_FAILED", message } };
      }
      // The instance ends after the first explain: the page then has no token.
      return { status: 200, body: over ? { lines: [] } : { lines: [], nextToken: "start" } };
    };
    const res = await stub.shoal(["logs", "i-1", "c", "--follow"]);
    expect(res).toEqual({
      code: 0,
      stdout: "",
      stderr:
        "will not run in this round: upstream 'b' ended FAILURE\n" +
        "did not run: upstream 'b' ended FAILURE\n",
    });
  });
});

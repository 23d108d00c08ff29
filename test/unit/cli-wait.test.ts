/**
 * `shoal wait` (lib/cli/wait.ts, the loop behind every `--wait`) on the states a wait can meet
 * on the way: a PAUSED instance (said once, not waited on silently), a timeout worded by the
 * state the instance is in, and an instance that failed for a reason of its own (a workflow
 * timeout). Run in-process against a stub of API v1 that answers a scripted sequence.
 */
import { describe, expect, it } from "vitest";
import { useStubApi } from "../helpers/stub-api.js";

const stub = useStubApi();
const { shoal } = stub;

const T0 = "2026-11-21T05:00:00.000Z";
const T1 = "2026-11-21T05:00:02.000Z";

/** An instance answer in `state`, with progress and no tasks. */
function instance(state: string, extra: Record<string, unknown> = {}) {
  return {
    instanceId: "i-1",
    workflow: "etl",
    version: 1,
    state,
    createdAt: T0,
    startedAt: T0,
    progress: { done: 1, active: 0, failed: 0, total: 2 },
    ...extra,
  };
}

/** Answers GET /v1/instances/i-1 with `answers` in turn, then the last one for good. */
function sequence(...answers: Array<Record<string, unknown>>) {
  let i = 0;
  stub.reply = (req) => {
    if (req.method !== "GET" || req.path !== "/v1/instances/i-1") {
      return { status: 404, body: { error: { code: "NotFound", message: "no such route" } } };
    }
    const body = answers[Math.min(i, answers.length - 1)];
    i++;
    return { status: 200, body };
  };
}

describe("shoal wait on a paused instance", () => {
  it("says once that it waits for a resume, then waits on to the end", async () => {
    sequence(
      instance("RUNNING"),
      instance("PAUSED"),
      instance("PAUSED"),
      instance("RUNNING"),
      instance("SUCCESS", { endedAt: T1, progress: { done: 2, active: 0, failed: 0, total: 2 } }),
    );
    const res = await shoal(["wait", "i-1"]);
    expect(res).toEqual({
      code: 0,
      stdout:
        "RUNNING  1/2 done, 0 active, 0 failed\n" +
        "PAUSED  1/2 done, 0 active, 0 failed\n" +
        "PAUSED: waiting until `shoal resume i-1`\n" +
        "RUNNING  1/2 done, 0 active, 0 failed\n" +
        "SUCCESS  2/2 done, 0 active, 0 failed\n" +
        "SUCCESS in 2.0s\n",
      stderr: "",
    });
  });

  it("words a timeout by state: paused stays paused, running keeps running", async () => {
    sequence(instance("PAUSED"));
    const paused = await shoal(["wait", "i-1", "--timeout", "0.1"]);
    expect(paused.code).toBe(1);
    expect(paused.stdout).toContain("PAUSED: waiting until `shoal resume i-1`\n");
    expect(paused.stderr).toBe(
      "error: timed out after 0.1s waiting for instance i-1 (state PAUSED); it stays paused " +
        "(resume it with: shoal resume i-1, or stop it with: shoal stop i-1)\n",
    );
    sequence(instance("RUNNING"));
    const running = await shoal(["wait", "i-1", "--timeout", "0.1"]);
    expect(running.stderr).toBe(
      "error: timed out after 0.1s waiting for instance i-1 (state RUNNING); it keeps running " +
        "(stop it with: shoal stop i-1)\n",
    );
  });
});

describe("shoal wait on an instance that failed for a reason of its own", () => {
  it("prints the instance's error after its final state", async () => {
    sequence(
      instance("FAILURE", {
        endedAt: T1,
        error: "the workflow timed out after 2s",
        progress: { done: 1, active: 0, failed: 1, total: 2 },
        tasks: [
          { code: "a", state: "SUCCESS", attempt: 1 },
          { code: "b", state: "KILLED", attempt: 1 },
        ],
      }),
    );
    const res = await shoal(["wait", "i-1"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe(
      "FAILURE  1/2 done, 0 active, 1 failed\n" +
        "FAILURE in 2.0s\n" +
        "reason: the workflow timed out after 2s\n" +
        "failed tasks: b (see: shoal logs i-1 <task>)\n",
    );
  });
});

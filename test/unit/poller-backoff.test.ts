/**
 * A poller whose queue is unreachable (an emulator restarting, a standalone gone) backs off
 * between receives and reports the failures now and then, rather than spinning and writing
 * hundreds of log lines a second; `stop` still returns at once.
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { QueuePoller } from "../../lib/standalone/poller.js";
import { until } from "../helpers/poll.js";

function unreachable() {
  const attempts: number[] = [];
  const sqs = {
    send: async () => {
      attempts.push(performance.now());
      throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    },
  } as unknown as SQSClient;
  return { sqs, attempts };
}

describe("a poller without its queue", () => {
  it("waits longer and longer between receives and logs the 1st, 2nd, 4th … failure", async () => {
    const { sqs, attempts } = unreachable();
    const errors: string[] = [];
    const poller = new QueuePoller({
      sqs,
      queueUrls: ["http://127.0.0.1:9/000000000000/q"],
      slots: 4,
      batchSize: 10,
      waitSeconds: 20,
      region: "us-east-1",
      handler: async () => ({ batchItemFailures: [] }),
      onError: (e) => errors.push(String(e)),
    });
    poller.start();
    try {
      await until(() => attempts.length >= 4, { timeoutMs: 15_000, what: "four receives" });
      // 0.5 s, 1 s and 2 s between the four: at least 3.5 s (was 0.5 s each, 1.5 s in all).
      expect((attempts[3] ?? 0) - (attempts[0] ?? 0)).toBeGreaterThanOrEqual(3_400);
      expect(errors).toHaveLength(3);
      expect(errors[0]).toContain("ECONNREFUSED");
      expect(errors[2]).toContain("4 receives failed in a row; next in 4 s");
      const stopping = performance.now();
      await poller.stop(0);
      expect(performance.now() - stopping).toBeLessThan(2_500);
    } finally {
      await poller.stop(0);
    }
  });

  it("counts the failed long polls of several queues as one outage", async () => {
    // Idle, with a long poll open on each queue, when the queue goes away: all three fail at once.
    let gone: () => void = () => {};
    const goneNow = new Promise<void>((r) => {
      gone = r;
    });
    let reachable = true;
    const sqs = {
      send: async (cmd: { input: { WaitTimeSeconds?: number } }) => {
        if (reachable && (cmd.input.WaitTimeSeconds ?? 0) === 0) return { Messages: [] };
        if (reachable) await goneNow;
        throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), {
          code: "ECONNREFUSED",
        });
      },
    } as unknown as SQSClient;
    const errors: Array<{ at: number; text: string }> = [];
    const poller = new QueuePoller({
      sqs,
      queueUrls: ["q-high", "q-default", "q-low"].map(
        (q) => `http://127.0.0.1:9/000000000000/${q}`,
      ),
      slots: 4,
      batchSize: 1,
      waitSeconds: 20,
      region: "us-east-1",
      handler: async () => ({ batchItemFailures: [] }),
      onError: (e) => errors.push({ at: performance.now(), text: String(e) }),
    });
    poller.start();
    try {
      await new Promise((r) => setTimeout(r, 200)); // the long polls are open
      reachable = false;
      gone();
      await until(() => errors.length >= 2, { timeoutMs: 15_000, what: "two reports" });
      // The second report is of the next receive, after the backoff, not of the second queue.
      const [first, second] = errors as [(typeof errors)[0], (typeof errors)[0]];
      expect(first.text).toContain("ECONNREFUSED");
      expect(second.text).toContain("2 receives failed in a row; next in 1 s");
      expect(second.at - first.at).toBeGreaterThanOrEqual(400);
    } finally {
      await poller.stop(0);
    }
  });
});

/**
 * ChildSupervisor (lib/standalone/supervisor.ts) on fake children: a death is told and followed
 * by a restart that gets the dead child's ready value; the delay doubles at each failure in a
 * row; a part that cannot be restarted `maxFailures` times in a row is given up (state `down`,
 * `onGiveUp` called once); nothing is restarted once stop was called.
 */
import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { Child } from "../../lib/standalone/child-process.js";
import { ChildSupervisor } from "../../lib/standalone/supervisor.js";
import { until } from "../helpers/poll.js";

let nextPid = 1000;

/** A child whose process is an emitter: `die()` emits what a SIGKILL would. */
function fakeChild(ready: number): Child<number> & { die(): void; stopped: boolean } {
  const proc = new EventEmitter() as unknown as ChildProcess;
  Object.assign(proc, { pid: nextPid++ });
  const child = {
    ready,
    process: proc,
    stopped: false,
    async stop() {
      child.stopped = true;
    },
    die: () => proc.emit("exit", null, "SIGKILL"),
  };
  return child;
}

function harness(opts: { maxFailures?: number; fail?: (n: number) => boolean } = {}) {
  const lines: string[] = [];
  const starts: Array<number | undefined> = [];
  const children: ReturnType<typeof fakeChild>[] = [];
  const givenUp: Error[] = [];
  const sup = new ChildSupervisor<number>({
    name: "thing",
    start: async (previous) => {
      starts.push(previous);
      if (opts.fail?.(starts.length)) throw new Error(`start ${starts.length} failed`);
      const c = fakeChild(starts.length);
      children.push(c);
      return c;
    },
    log: (msg) => lines.push(msg),
    initialDelayMs: 5,
    maxDelayMs: 20,
    ...(opts.maxFailures !== undefined ? { maxFailures: opts.maxFailures } : {}),
    onGiveUp: (e) => givenUp.push(e),
  });
  return { sup, lines, starts, children, givenUp };
}

describe("ChildSupervisor", () => {
  it("restarts a dead child with the dead one's ready value, and tells both", async () => {
    const h = harness();
    expect(await h.sup.start()).toBe(1);
    expect(h.sup.state).toBe("ok");
    h.children[0]?.die();
    expect(h.sup.state).toBe("restarting");
    expect(h.lines[0]).toMatch(
      /the thing process \(pid \d+\) exited unexpectedly \(signal SIGKILL\); restarting it in 0.005 s/,
    );
    await until(() => h.sup.state === "ok", { what: "the restart" });
    expect(h.starts).toEqual([undefined, 1]);
    expect(h.sup.pid).toBe(h.children[1]?.process.pid);
    expect(h.lines[1]).toMatch(/the thing process restarted/);
    await h.sup.stop();
    expect(h.children[1]?.stopped).toBe(true);
  });

  it("doubles the delay at each failure in a row, up to the cap", async () => {
    const h = harness({ fail: (n) => n >= 2 && n <= 4 });
    await h.sup.start();
    h.children[0]?.die();
    await until(() => h.sup.state === "ok", { what: "the restart after three failures" });
    const delays = h.lines.map((l) => /restarting it in ([\d.]+) s/.exec(l)?.[1]).filter(Boolean);
    expect(delays).toEqual(["0.005", "0.01", "0.02", "0.02"]);
    await h.sup.stop();
  });

  it("gives the part up after maxFailures failed restarts in a row", async () => {
    const h = harness({ maxFailures: 2, fail: (n) => n >= 2 });
    await h.sup.start();
    h.children[0]?.die();
    await until(() => h.givenUp.length > 0, { what: "the part to be given up" });
    expect(h.sup.state).toBe("down");
    expect(h.givenUp).toHaveLength(1);
    expect(h.givenUp[0]?.message).toMatch(
      /the thing process failed to restart: start 3 failed; it could not be restarted \(2 attempts in a row failed\)/,
    );
    expect(h.starts).toHaveLength(3);
  });

  it("restarts nothing once stopped, even a restart already due", async () => {
    const h = harness();
    await h.sup.start();
    h.children[0]?.die();
    await h.sup.stop();
    // The death during stop is not told as unexpected, and no child is started after stop.
    h.children[0]?.die();
    await new Promise((r) => setImmediate(r));
    expect(h.starts).toHaveLength(1);
    expect(h.lines).toHaveLength(1);
  });
});

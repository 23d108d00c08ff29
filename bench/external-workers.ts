/** `shoal worker` child processes next to standalone, asked over IPC for their request counts. */
import type { ChildProcess } from "node:child_process";
import { processCpuMs } from "./proc-cpu.js";

/** `shoal worker` processes next to standalone (instead of its built-in worker). */
export class ExternalWorkers {
  private cpu0: number[] = [];

  constructor(readonly children: ChildProcess[]) {}

  private ask(child: ChildProcess, msg: string, key: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`worker ${child.pid} did not answer '${msg}'`)),
        5_000,
      );
      const on = (m: unknown) => {
        if (m && typeof m === "object" && key in m) {
          clearTimeout(timer);
          child.off("message", on);
          resolve(m as Record<string, unknown>);
        }
      };
      child.on("message", on);
      child.send(msg);
    });
  }

  async reset(): Promise<void> {
    await Promise.all(this.children.map((c) => this.ask(c, "reset", "reset")));
    this.cpu0 = this.children.map((c) => processCpuMs(c.pid));
  }

  /** Request counts of all worker processes, and their CPU ms (with their task processes) since reset. */
  async collect(): Promise<{ counts: Record<string, number>; cpuMs: number }> {
    const answers = await Promise.all(this.children.map((c) => this.ask(c, "counts", "counts")));
    const counts: Record<string, number> = {};
    for (const a of answers) {
      for (const [k, v] of Object.entries(a.counts as Record<string, number>))
        counts[k] = (counts[k] ?? 0) + v;
    }
    const cpuMs = this.children.reduce(
      (sum, c, i) => sum + processCpuMs(c.pid) - (this.cpu0[i] ?? 0),
      0,
    );
    return { counts, cpuMs };
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            const t = setTimeout(() => c.kill("SIGKILL"), 5_000);
            c.once("exit", () => {
              clearTimeout(t);
              resolve();
            });
            c.kill("SIGTERM");
          }),
      ),
    );
  }
}

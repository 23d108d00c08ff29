/**
 * Starts `shoal standalone` in this process on a fresh temporary data directory and instruments
 * it from the outside (no engine code changes):
 * - every AWS SDK request is timed and attributed to the component that sent it (dispatcher,
 *   worker, sweeper — by AsyncLocalStorage around their entry points — or the queue pollers,
 *   by queue URL; the rest is the API);
 * - ReceiveMessage calls are classified (long poll / short, with or without messages);
 * - dispatcher batch sizes and sweeper ticks are counted;
 * - CPU time of this process, of its reaped children (the task processes) and the event loop
 *   utilisation are measured over a window.
 * The counts of the runtime's clients (lib/aws/clients.ts `RequestCounter`) stay the reference figure.
 * The figures are kept by instrumentation.ts (CPU from /proc: proc-cpu.ts); `shoal worker` child
 * processes are driven by external-workers.ts.
 */

import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { readEnvFile } from "../lib/standalone/env-file.js";
import { type Standalone, startStandalone } from "../lib/standalone/standalone.js";
import { benchBackend } from "./backend.js";
import { ExternalWorkers } from "./external-workers.js";
import { type Component, epochNow, Instrumentation } from "./instrumentation.js";

type Handler<A, R> = (arg: A) => Promise<R>;

export interface Harness {
  standalone: Standalone;
  apiUrl: string;
  workers: number;
  dataDir: string;
  instr: Instrumentation;
  /** Set when tasks run in separate `shoal worker` processes. */
  external?: ExternalWorkers;
  stop(): Promise<void>;
}

/**
 * Starts standalone with `workers` task slots on a fresh temp dir and instruments it.
 * @param opts.externalProcesses run the slots in that many `shoal worker` processes instead of
 *   standalone's built-in worker (their requests are counted in those processes).
 */
export async function startHarness(
  workers: number,
  opts: { externalProcesses?: number } = {},
): Promise<Harness> {
  // Standalone runs its worker in a child process; the bench does the same with its own
  // `shoal worker` children, whose AWS requests it can count (one process unless told).
  const externalProcesses = opts.externalProcesses ?? 1;
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-bench-"));
  process.env.SHOAL_QUIET = "true";
  const standalone = await startStandalone({
    port: 0,
    dataDir,
    workers: 0,
    examples: false,
    quiet: true,
    backend: benchBackend(),
  });
  const { runtime } = standalone;
  const instr = new Instrumentation(runtime.config.eventsQueueUrl ?? "", runtime.clients.counter);

  // Time every request (initialize step: includes serialisation, HTTP, parsing, retries).
  const timer = (service: string) =>
    ((next: (a: unknown) => Promise<{ output: unknown }>, ctx: { commandName?: string }) =>
      async (args: { input: Record<string, unknown> }) => {
        const t = performance.now();
        let output: unknown;
        try {
          const r = await next(args);
          output = r.output;
          return r;
        } finally {
          instr.record(service, ctx.commandName, args.input, performance.now() - t, output);
        }
      }) as never;
  runtime.clients.dynamo.middlewareStack.add(timer("DynamoDB"), {
    step: "initialize",
    name: "benchTimer",
  });
  runtime.clients.sqs.middlewareStack.add(timer("SQS"), { step: "initialize", name: "benchTimer" });

  // Attribute requests to the component whose handler is running (the pollers call these
  // properties at call time, so wrapping the instances' methods is enough).
  const wrap = <A, R>(
    obj: Record<string, unknown>,
    method: string,
    component: Component,
    onCall?: (a: A) => void,
  ) => {
    const orig = (obj[method] as Handler<A, R>).bind(obj);
    obj[method] = (arg: A) => {
      onCall?.(arg);
      const t0 = epochNow();
      const p = instr.als.run(component, () => orig(arg));
      if (instr.tracing) {
        const n = Array.isArray(arg) ? arg.length : 1;
        void p
          .finally(() => instr.calls.push({ component, t0, t1: epochNow(), n }))
          .catch(() => {});
      }
      return p;
    };
  };
  wrap<readonly unknown[], unknown>(
    runtime.dispatcher as never,
    "handleBatch",
    "dispatcher",
    (records) => instr.dispatcherBatches.push(records.length),
  );
  wrap(runtime.worker as never, "handleBatch", "worker");
  wrap(runtime.sweeper as never, "sweep", "sweeper", () => instr.sweeperTicks++);

  let external: ExternalWorkers | undefined;
  if (externalProcesses) {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      SHOAL_QUIET: "true",
    };
    // Read as `shoal worker` reads it (values are quoted in the file).
    readEnvFile(standalone.envFile, env, true);
    const here = dirname(fileURLToPath(import.meta.url));
    const per = Math.ceil(workers / externalProcesses);
    const children = Array.from({ length: externalProcesses }, () =>
      fork(join(here, "worker-child.ts"), [String(per)], {
        env,
        cwd: join(here, ".."), // resolves --import tsx
        execArgv: ["--import", "tsx", "--no-warnings"],
        stdio: ["ignore", "ignore", "inherit", "ipc"],
      }),
    );
    external = new ExternalWorkers(children);
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve, reject) => {
            const t = setTimeout(
              () => reject(new Error("shoal worker process did not start")),
              30_000,
            );
            c.once("message", () => {
              clearTimeout(t);
              resolve();
            });
            c.once("exit", (code) => reject(new Error(`shoal worker process exited with ${code}`)));
          }),
      ),
    );
    await delay(300); // its poller's first receives
    await external.reset();
  }

  return {
    standalone,
    apiUrl: standalone.apiUrl,
    workers,
    dataDir,
    instr,
    ...(external ? { external } : {}),
    async stop() {
      await external?.stop();
      await standalone.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

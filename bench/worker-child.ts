/**
 * A `shoal worker` process for the benchmarks (lib/standalone/worker-process.ts, unchanged),
 * which also answers its parent over IPC: "reset" clears its AWS request counts, "counts" sends
 * them back. Usage (by bench/harness.ts): node --import tsx bench/worker-child.ts <concurrency>
 */
import { RequestCounter } from "../lib/aws/clients.js";
import { runWorkerProcess } from "../lib/standalone/worker-process.js";
import { costMeterForWorker } from "./cost-worker.js";

const concurrency = Number(process.argv[2] ?? 8);
/** The worker's AWS requests (its clients count on it). */
const counter = new RequestCounter();
/** With SHOAL_BENCH_COST=1 (bench/cost.ts): what AWS would bill for this worker's requests. */
const cost = process.env.SHOAL_BENCH_COST === "1" ? await costMeterForWorker() : undefined;

process.on("message", (m: unknown) => {
  if (m === "reset") {
    counter.reset();
    cost?.reset();
    process.send?.({ reset: true });
  } else if (m === "counts") {
    process.send?.({ counts: Object.fromEntries(counter.counts) });
  } else if (m === "cost") {
    process.send?.({ cost: cost?.counts() ?? {} });
  }
});
process.on("disconnect", () => process.kill(process.pid, "SIGTERM"));
process.send?.({ ready: true });

await runWorkerProcess({ group: "default", concurrency, counter });
process.exit(0);

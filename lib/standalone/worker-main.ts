/** Entry point of standalone's built-in worker process (see worker-child.ts). */
import { runWorkerProcess } from "./worker-process.js";

const concurrency = Number(process.argv[2] ?? 4);
await runWorkerProcess({ group: "default", concurrency, quiet: true });
process.exit(0);

/**
 * Entry point of the ECS worker image (cdk/worker-image/Dockerfile): `shoal worker` without the
 * rest of the CLI, bundled with its dependencies into one file (cdk/bundles.ts). Arguments:
 * `--group <group>` (default "default") and `--concurrency <n>` (1 … 256, default 4), as
 * `shoal worker` takes them; the configuration comes from the environment the stack sets.
 */
import { parseArgs } from "node:util";
// biome-ignore lint/style/noRestrictedImports: not part of the construct: the ECS image's entry point, bundled by esbuild (cdk/bundles.ts) and run in the container only.
import { runWorkerProcess } from "../../lib/standalone/worker-process.js";

const { values } = parseArgs({
  options: { group: { type: "string" }, concurrency: { type: "string" } },
  strict: true,
});
const concurrency = Number(values.concurrency ?? 4);
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
  console.error(`--concurrency must be an integer from 1 to 256, got '${values.concurrency}'`);
  process.exit(2);
}
await runWorkerProcess({ group: values.group ?? "default", concurrency });
process.exit(0);

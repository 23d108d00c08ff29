/**
 * Writes the code the `Shoal` construct deploys (cdk/bundles.ts) into `outDir` (default
 * `<package>/dist/lambda`): `<handler>/index.mjs` (+ `.map`) for api, dispatcher, sweeper,
 * trigger and worker, and the ECS worker image's context `ecs-worker/` (Dockerfile, index.mjs).
 * Run by `npm run build`; by hand: `tsx scripts/bundle-lambdas.ts [outDir]`.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { bundleBuilds, copyBundleFiles } from "../cdk/bundles.js";
import { PACKAGE_ROOT } from "../lib/package-root.js";

/**
 * Bundles every handler and the ECS worker with esbuild into `outDir`, emptied first (nothing
 * stale survives).
 * @returns the bundle files written (absolute paths).
 * @throws esbuild's error when a bundle fails to build.
 */
export async function bundleLambdas(
  outDir = resolve(PACKAGE_ROOT, "dist", "lambda"),
): Promise<string[]> {
  rmSync(outDir, { recursive: true, force: true });
  const builds = bundleBuilds(outDir);
  await Promise.all(builds.map((b) => build(b)));
  copyBundleFiles(outDir);
  return builds.map((b) => b.outfile);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const started = Date.now();
  const out = process.argv[2] ? resolve(process.argv[2]) : undefined;
  const files = await bundleLambdas(out);
  console.log(`bundled ${files.length} entry points in ${Date.now() - started} ms`);
}

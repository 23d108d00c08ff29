/**
 * The code the `Shoal` construct deploys, one directory of bundles built by esbuild from the
 * TypeScript sources: `<handler>/index.mjs` (+ `.map`) for each of the six Lambda handlers, and
 * `ecs-worker/`, the ECS worker image's build context (a Dockerfile and one bundled `index.mjs`).
 *
 * An installed package ships them pre-built in `dist/lambda/` (`npm run build` runs
 * scripts/bundle-lambdas.ts). The repository never deploys `dist/`: running from the sources
 * (tsx, vitest) the construct builds them afresh once per process into a temporary directory,
 * so what `cdk deploy` ships is always the code of the checkout.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FROM_SOURCES, PACKAGE_ROOT } from "../lib/package-root.js";

/** The Lambda handlers, each `functions/<handler>/index.ts`; every worker group runs `worker`. */
export const LAMBDA_HANDLERS = [
  "api",
  "dispatcher",
  "sweeper",
  "trigger",
  "worker",
  "alerts",
] as const;

/** One of {@link LAMBDA_HANDLERS}. */
export type LambdaHandler = (typeof LAMBDA_HANDLERS)[number];

/** ESM bundles of CommonJS dependencies need `require`. */
const REQUIRE_BANNER =
  "import { createRequire as __shoalRequire } from 'module'; const require = __shoalRequire(import.meta.url);";

/** The subset of esbuild's BuildOptions used here (esbuild is a build-time tool only). */
export interface BundleBuild {
  entryPoints: string[];
  outfile: string;
  bundle: true;
  platform: "node";
  format: "esm";
  target: string;
  minify: boolean;
  keepNames: boolean;
  sourcemap: boolean;
  sourcesContent: boolean;
  external: string[];
  banner: { js: string };
  logLevel: "warning";
}

/**
 * The esbuild builds writing every bundle under `outDir`, from the sources under `root`: the
 * options `NodejsFunction` used (ESM, node22, minified, names kept, source maps, `@aws-sdk/*`
 * left to the Lambda runtime); the ECS worker bundles the SDK too (plain Node image).
 */
export function bundleBuilds(outDir: string, root: string = PACKAGE_ROOT): BundleBuild[] {
  const common = {
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    minify: true,
    // Error classes name themselves after their class (lib/core/errors.ts): keep class names
    // through minification so logs and answers say `RetryLater`, not `Cr`.
    keepNames: true,
    sourcemap: true,
    // Stack traces map to file:line without the sources' text: a third of the package's size.
    sourcesContent: false,
    banner: { js: REQUIRE_BANNER },
    logLevel: "warning",
  } as const;
  return [
    ...LAMBDA_HANDLERS.map((h) => ({
      ...common,
      entryPoints: [join(root, "functions", h, "index.ts")],
      outfile: join(outDir, h, "index.mjs"),
      external: ["@aws-sdk/*"],
    })),
    {
      ...common,
      entryPoints: [join(root, "cdk", "worker-image", "main.ts")],
      outfile: join(outDir, "ecs-worker", "index.mjs"),
      external: [],
    },
  ];
}

/** Copies the files next to the bundles that esbuild does not write (the image's Dockerfile). */
export function copyBundleFiles(outDir: string, root: string = PACKAGE_ROOT): void {
  mkdirSync(join(outDir, "ecs-worker"), { recursive: true });
  copyFileSync(
    join(root, "cdk", "worker-image", "Dockerfile"),
    join(outDir, "ecs-worker", "Dockerfile"),
  );
}

let built: string | undefined;

/** Temporary bundle directories are `<tmp>/shoal-bundles-<pid>`. */
const TEMP_PREFIX = "shoal-bundles-";

/**
 * Removes the bundle directories of processes that are gone: a process killed (a test worker,
 * an interrupted synth) never runs its exit handler.
 */
function removeOrphans(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(name.slice(TEMP_PREFIX.length));
    if (!name.startsWith(TEMP_PREFIX) || !Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ESRCH") {
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
      }
    }
  }
}

/**
 * The directory holding `<handler>/` and `ecs-worker/`: `<package>/dist/lambda` in an installed
 * package; from the sources, `<tmp>/shoal-bundles-<pid>` bundled now (once per process, about
 * 2 s; removed when the process exits, or by the next one if it was killed), never a `dist/`
 * that may be older than the sources.
 * @throws Error when the package has no bundles (a package built without `npm run build`).
 */
export function bundlesDir(): string {
  if (!FROM_SOURCES) {
    const dir = join(PACKAGE_ROOT, "dist", "lambda");
    if (!existsSync(join(dir, "worker", "index.mjs"))) {
      throw new Error(
        `Shoal's Lambda bundles are missing from ${dir}: the package was not built ('npm run build' writes them)`,
      );
    }
    return dir;
  }
  if (built === undefined) {
    removeOrphans();
    const dir = join(tmpdir(), `${TEMP_PREFIX}${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    // A devDependency, loaded only when running from the sources (esbuild is CommonJS).
    const esbuild = createRequire(import.meta.url)("esbuild") as {
      buildSync: (o: BundleBuild) => unknown;
    };
    for (const b of bundleBuilds(dir)) esbuild.buildSync(b);
    copyBundleFiles(dir);
    built = dir;
  }
  return built;
}

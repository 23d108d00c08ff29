/**
 * Where Shoal's own files are at run time: the repository (running the TypeScript sources) or
 * an installed package (running the compiled `dist/`). Both have package.json at the root, so
 * the root is the nearest ancestor of this module that holds one — not counting `dist/`, where
 * tsc copies package.json because lib/version.ts imports it.
 */
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(from: string): string {
  let dir = from;
  for (;;) {
    if (basename(dir) !== "dist" && existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}: Shoal's install is incomplete`);
    dir = up;
  }
}

/** Absolute path of the repository or of the installed package (no trailing slash). */
export const PACKAGE_ROOT: string = findRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * True when this module runs from the TypeScript sources (the repository, through tsx or
 * vitest), false when it runs compiled from `dist/`.
 */
export const FROM_SOURCES: boolean = import.meta.url.endsWith(".ts");

/**
 * A module of lib/ beside the caller, as a path to fork: `entry(import.meta.url, "./x")` is
 * x.ts when running from the sources, x.js when compiled.
 */
export function siblingEntry(base: string, relative: string): string {
  return fileURLToPath(new URL(`${relative}${FROM_SOURCES ? ".ts" : ".js"}`, base));
}

/** Reading WfCommons trace files from disk (plain or gzipped JSON). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { PACKAGE_ROOT } from "../package-root.js";

/** The traces shipped with Shoal (examples/wfcommons/). */
export const WFCOMMONS_DIR = `${join(PACKAGE_ROOT, "examples", "wfcommons")}/`;

/**
 * Reads and parses a trace; `.gz` files are gunzipped.
 * @throws Error naming the file when it cannot be read or is not JSON.
 */
export function readWfcommonsFile(path: string): unknown {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch (e) {
    throw new Error(
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  try {
    const text = (path.endsWith(".gz") ? gunzipSync(raw) : raw).toString("utf8");
    return JSON.parse(text);
  } catch (e) {
    throw new Error(
      `${path} is not a WfCommons JSON file${path.endsWith(".gz") ? " (gzipped)" : ""}: ${(e as Error).message}`,
    );
  }
}

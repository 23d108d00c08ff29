/** Loads examples/*.yaml|json into a running API (what `shoal standalone` does at start). */
import { readdirSync, readFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { parse } from "yaml";
import type { ApiDeps } from "../api/deps.js";
import { handleApiRequest } from "../api/router.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { httpApiEvent } from "./lambda-events.js";

export const EXAMPLES_DIR = `${join(PACKAGE_ROOT, "examples")}/`;

/** @returns what was loaded, as `name vN` strings; problems are reported, not thrown. */
export async function loadExamples(
  api: ApiDeps,
  dir = EXAMPLES_DIR,
): Promise<{ loaded: string[]; errors: string[] }> {
  const loaded: string[] = [];
  const errors: string[] = [];
  let files: string[] = [];
  try {
    files = readdirSync(dir)
      .filter((f) => [".yaml", ".yml", ".json"].includes(extname(f)))
      .sort();
  } catch {
    return { loaded, errors };
  }
  for (const file of files) {
    try {
      const doc = parse(readFileSync(join(dir, file), "utf8")) as Record<string, unknown>;
      const name = typeof doc.name === "string" ? doc.name : basename(file, extname(file));
      const { name: _n, ...body } = doc;
      const res = await handleApiRequest(
        api,
        httpApiEvent({
          method: "PUT",
          path: `/v1/workflows/${encodeURIComponent(name)}`,
          headers: { "content-type": "application/json", "user-agent": "shoal" },
          body: JSON.stringify(body),
          requestId: "examples",
          timeEpoch: Date.now(),
        }),
      );
      if ((res.statusCode ?? 200) >= 300) errors.push(`${file}: ${res.body}`);
      else
        loaded.push(`${name} v${(JSON.parse(res.body ?? "{}") as { version?: number }).version}`);
    } catch (e) {
      errors.push(`${file}: ${(e as Error).message}`);
    }
  }
  return { loaded, errors };
}

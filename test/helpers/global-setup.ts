/**
 * Starts dynalite and fauxqs (in memory, free ports) once for the whole run; integration tests
 * reach them through `inject("dynamodbEndpoint")` / `inject("sqsEndpoint")`. Also makes the run's
 * pack directory (`inject("packDir")`), where the first test needing the packed package builds it
 * (test/helpers/packed-tarball.ts); it is removed at the end.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmulators } from "../../lib/standalone/emulators.js";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sqsEndpoint: string;
    /**
     * The embedded backend's directory (test/embedded/global-setup.ts): the files' clients then
     * open it in-process, as standalone's processes do; empty on the emulators.
     */
    embeddedDir: string;
    packDir: string;
  }
}

export default async function setup(project: TestProject) {
  const em = await startEmulators();
  project.provide("dynamodbEndpoint", em.dynamodbEndpoint);
  project.provide("sqsEndpoint", em.sqsEndpoint);
  project.provide("embeddedDir", "");
  const packDir = mkdtempSync(join(tmpdir(), "shoal-pack-"));
  project.provide("packDir", packDir);
  return async () => {
    await em.stop();
    rmSync(packDir, { recursive: true, force: true });
  };
}

/**
 * Global setup of `npm run test:embedded`: the embedded backend (lib/embedded/backend.ts) on a
 * fresh directory, whose one endpoint serves both DynamoDB and SQS; tests reach it through
 * `inject("dynamodbEndpoint")` / `inject("sqsEndpoint")` exactly as with
 * test/helpers/global-setup.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import "../../lib/embedded/quiet-sqlite-warning.js";
import { startEmbeddedBackend } from "../../lib/embedded/backend.js";

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "shoal-embedded-test-"));
  const backend = await startEmbeddedBackend({ dir });
  project.provide("dynamodbEndpoint", backend.dynamodbEndpoint);
  project.provide("sqsEndpoint", backend.sqsEndpoint);
  const packDir = mkdtempSync(join(tmpdir(), "shoal-pack-"));
  project.provide("packDir", packDir);
  return async () => {
    await backend.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(packDir, { recursive: true, force: true });
  };
}

/**
 * Global setup of `npm run test:embedded`: the embedded backend (lib/embedded/backend.ts) on a
 * fresh directory, whose one endpoint serves both DynamoDB and SQS; tests reach it through
 * `inject("dynamodbEndpoint")` / `inject("sqsEndpoint")` exactly as with
 * test/helpers/global-setup.ts, and their client bundles (test/helpers/aws-env.ts) open its files
 * directly through `inject("embeddedDir")`, as standalone's processes do.
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
  // The test files' clients open the files in-process (standalone's path); what a test sends
  // to the endpoint instead (raw SDK clients, spawned Lambda bundles) meets the same data.
  project.provide("embeddedDir", dir);
  const packDir = mkdtempSync(join(tmpdir(), "shoal-pack-"));
  project.provide("packDir", packDir);
  return async () => {
    await backend.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(packDir, { recursive: true, force: true });
  };
}

/**
 * Starts dynalite and fauxqs (in memory, free ports) once for the whole run; integration tests
 * reach them through `inject("dynamodbEndpoint")` / `inject("sqsEndpoint")`.
 */
import type { TestProject } from "vitest/node";
import { startEmulators } from "../../lib/standalone/emulators.js";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sqsEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const em = await startEmulators();
  project.provide("dynamodbEndpoint", em.dynamodbEndpoint);
  project.provide("sqsEndpoint", em.sqsEndpoint);
  return async () => {
    await em.stop();
  };
}

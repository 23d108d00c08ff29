/**
 * The standalone backend the scenarios run on now (`--backend=embedded,emulators`): bench/run.ts
 * runs each scenario once per backend and sets this before each pass; harness.ts and
 * schedules-run.ts read it.
 */
import type { BackendKind } from "../lib/standalone/defaults.js";

let current: BackendKind = "embedded";

/** The backend of the pass that runs now. */
export function benchBackend(): BackendKind {
  return current;
}

/** Sets the backend of the next scenarios (bench/run.ts). */
export function setBenchBackend(kind: BackendKind): void {
  current = kind;
}

/**
 * Where `shoal standalone` listens unless told otherwise; the CLI talks to it there by default,
 * so a first `shoal run` needs no configuration.
 */

/** The standalone API's default HTTP port. */
export const DEFAULT_PORT = 8080;
/** The standalone API's default URL, the CLI's endpoint when none is configured. */
export const DEFAULT_ENDPOINT = `http://localhost:${DEFAULT_PORT}`;

/**
 * Where `shoal standalone` keeps its state (`--backend`): `embedded` (DynamoDB and SQS
 * in-process on SQLite, lib/embedded/) or `emulators` (dynalite and fauxqs child processes).
 */
export type BackendKind = "embedded" | "emulators";

/** The backends, default first. */
export const BACKEND_KINDS: readonly BackendKind[] = ["embedded", "emulators"];

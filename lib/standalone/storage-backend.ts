/**
 * Where standalone keeps its state: the embedded backend (the default: DynamoDB and SQS
 * in-process on SQLite, lib/embedded/) or the emulators (`--backend emulators`: dynalite and
 * fauxqs in child processes, for AWS-protocol fidelity). Both answer the AWS protocol on a
 * loopback endpoint; the embedded one is also opened directly by every process that joins
 * (SHOAL_EMBEDDED_DIR).
 */
import "../embedded/register.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startEmbeddedBackend } from "../embedded/backend.js";
import type { BackendKind } from "./defaults.js";
import { type EmulatorProcesses, startEmulatorProcess } from "./emulator-process.js";
import { awsProtocolGate } from "./host-gate.js";
import { fullFileSystem } from "./preflight.js";
import type { PartState } from "./supervisor.js";

/** How often the embedded backend checks its file system for room, ms. */
const DISK_CHECK_MS = 1_000;

/** A running backend. */
export interface StorageBackend {
  kind: BackendKind;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** The embedded backend's directory (SHOAL_EMBEDDED_DIR); absent on the emulators. */
  embeddedDir?: string;
  /** States of its supervised children, for `/v1/health` (none for the embedded backend). */
  parts(): Record<string, PartState>;
  stop(): Promise<void>;
}

/**
 * The other backend's name when `dataDir` holds only its data (a data dir from before the
 * embedded backend was the default, started now without `--backend`), else undefined: its
 * workflows and instances are not lost, only on the other backend.
 */
export function dataOfOtherBackend(kind: BackendKind, dataDir: string): BackendKind | undefined {
  const embedded = existsSync(embeddedDirOf(dataDir));
  const emulators = existsSync(join(dataDir, "dynamodb"));
  if (kind === "embedded" && emulators && !embedded) return "emulators";
  if (kind === "emulators" && embedded && !emulators) return "embedded";
  return undefined;
}

/** The embedded backend's directory inside a data directory. */
export function embeddedDirOf(dataDir: string): string {
  return join(dataDir, "embedded");
}

/**
 * Starts the `kind` backend over `dataDir`.
 * @param supervision as {@link startEmulatorProcess} takes it (the embedded backend has no
 *   children: it uses `preferredPorts.dynamodb` for its endpoint only, and `allowedHosts`).
 * @throws when it cannot start.
 */
export async function startStorageBackend(
  kind: BackendKind,
  dataDir: string,
  supervision: Parameters<typeof startEmulatorProcess>[1],
): Promise<StorageBackend> {
  if (kind === "emulators") {
    const em: EmulatorProcesses = await startEmulatorProcess(dataDir, supervision);
    return {
      kind,
      dynamodbEndpoint: em.dynamodbEndpoint,
      sqsEndpoint: em.sqsEndpoint,
      parts: () => em.parts(),
      stop: () => em.stop(),
    };
  }
  const dir = embeddedDirOf(dataDir);
  const preferred = supervision?.preferredPorts?.dynamodb;
  const gate = awsProtocolGate(supervision?.allowedHosts ?? []);
  let backend: Awaited<ReturnType<typeof startEmbeddedBackend>>;
  try {
    backend = await startEmbeddedBackend({ dir, port: preferred ?? 0, gate });
  } catch (e) {
    if (!preferred || (e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e;
    backend = await startEmbeddedBackend({ dir, port: 0, gate });
  }
  // The embedded backend fails its writes while the disk is full (a retryable 500: the API
  // answers 503) and takes them again once there is room; health and the log say why meanwhile.
  let full: string | undefined;
  const check = () => {
    const now = fullFileSystem(dir);
    if (now && !full) supervision?.log?.(`standalone: ${now}`, { part: "storage" });
    if (!now && full)
      supervision?.log?.("standalone: the file system has room again", { part: "storage" });
    full = now;
  };
  check();
  const timer = setInterval(check, DISK_CHECK_MS);
  timer.unref();
  return {
    kind,
    dynamodbEndpoint: backend.dynamodbEndpoint,
    sqsEndpoint: backend.sqsEndpoint,
    embeddedDir: dir,
    parts: () => {
      check();
      return { storage: full ? "down" : "ok" };
    },
    stop: () => {
      clearInterval(timer);
      return backend.stop();
    },
  };
}

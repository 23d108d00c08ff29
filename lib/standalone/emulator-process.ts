/**
 * Runs the embedded emulators in child processes, so they use the second core instead of
 * competing with the handlers on standalone's event loop. Each child exits when its parent goes
 * away, however it goes (its IPC channel closes), so a `kill -9` of standalone leaves nothing.
 * Each is supervised for its whole life (supervisor.ts): one that dies is started again on the
 * same port over the same data, so the endpoints every client holds stay valid.
 */
import { join } from "node:path";
import { siblingEntry } from "../package-root.js";
import { ALLOWED_HOSTS_ENV } from "./allowed-hosts.js";
import { type Child, forkChild } from "./child-process.js";
import type { Emulators } from "./emulators.js";
import { ENDPOINTS_FILE, readEnvFileEntries } from "./env-file.js";
import { fullFileSystem } from "./preflight.js";
import { ChildSupervisor, type PartState } from "./supervisor.js";

const MAIN = siblingEntry(import.meta.url, "./emulator-main");

type Endpoints = Pick<Emulators, "dynamodbEndpoint" | "sqsEndpoint">;
type Which = "dynamodb" | "sqs";

/** Restarts of an emulator that may fail in a row before standalone gives up (0.5 + 1 + 2 + 4 + 8 s of backoff). */
export const EMULATOR_MAX_FAILURES = 5;

/** The emulators, each supervised. */
export interface EmulatorProcesses extends Emulators {
  /** Each emulator's state, for `/v1/health`. */
  parts(): Record<Which, PartState>;
}

/**
 * Starts dynalite and fauxqs, each in a child process of its own (three busy event loops on
 * two cores beat one), with data under `dataDir`, and keeps them running until `stop`.
 * @param supervision.log where a death and a restart are told (default: nowhere).
 * @param supervision.onGiveUp called when an emulator could not be restarted
 *   ({@link EMULATOR_MAX_FAILURES} times in a row): the caller must stop.
 * @param supervision.stopping true once the caller is stopping: exits are then expected.
 * @throws when either cannot start (the other is stopped first).
 */
export async function startEmulatorProcess(
  dataDir: string,
  supervision: {
    log?: (msg: string, fields?: Record<string, unknown>) => void;
    onGiveUp?: (error: Error) => void;
    /** Called after an emulator restarted (what failed meanwhile may be tried again now). */
    onRestarted?: () => void;
    stopping?: () => boolean;
    /**
     * Ports to listen on at the first start, those of the last run over this data dir
     * ({@link previousPorts}): `shoal worker`s and `shoal sweeper`s that outlived that run
     * reconnect to the same endpoints. One that is taken now is replaced by a free one.
     */
    preferredPorts?: Partial<Record<Which, number>>;
    /** Names the emulators answer besides the loopback ones (`--allowed-host`), normalised. */
    allowedHosts?: readonly string[];
  } = {},
): Promise<EmulatorProcesses> {
  const log = supervision.log ?? (() => {});
  const allowed = supervision.allowedHosts ?? [];
  const startOne = (which: Which, port: number) => startEmulator(dataDir, which, port, allowed);
  const first = async (which: Which): Promise<Child<Endpoints>> => {
    const port = supervision.preferredPorts?.[which];
    if (!port) return startOne(which, 0);
    try {
      return await startOne(which, port);
    } catch (e) {
      // Taken: a free one (the caller compares and tells, once its log exists).
      if (!/EADDRINUSE/.test(String(e))) throw e;
      return startOne(which, 0);
    }
  };
  const supervise = (which: Which) =>
    new ChildSupervisor<Endpoints>({
      name: which,
      start: (previous) => (previous ? startOne(which, portOf(previous, which)) : first(which)),
      log,
      maxFailures: EMULATOR_MAX_FAILURES,
      ...(supervision.onGiveUp ? { onGiveUp: supervision.onGiveUp } : {}),
      ...(supervision.onRestarted ? { onRestarted: supervision.onRestarted } : {}),
      ...(supervision.stopping ? { stopping: supervision.stopping } : {}),
      diagnose: () => fullFileSystem(dataDir),
    });
  const ddb = supervise("dynamodb");
  const sqs = supervise("sqs");
  const [d, s] = await Promise.allSettled([ddb.start(), sqs.start()]);
  if (d.status === "rejected" || s.status === "rejected") {
    await Promise.all([ddb.stop(), sqs.stop()]);
    throw d.status === "rejected" ? d.reason : (s as PromiseRejectedResult).reason;
  }
  return {
    dynamodbEndpoint: d.value.dynamodbEndpoint,
    sqsEndpoint: s.value.sqsEndpoint,
    parts: () => ({ dynamodb: ddb.state, sqs: sqs.state }),
    stop: async () => {
      await Promise.all([ddb.stop(), sqs.stop()]);
    },
  };
}

/**
 * The emulators' ports of the last run over `dataDir`, from the endpoints.env it wrote
 * (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_SQS`); none when there is no such file or it
 * cannot be read.
 */
export function previousPorts(dataDir: string): Partial<Record<Which, number>> {
  let entries: Record<string, string>;
  try {
    entries = readEnvFileEntries(join(dataDir, ENDPOINTS_FILE));
  } catch {
    return {};
  }
  const out: Partial<Record<Which, number>> = {};
  for (const [which, key] of [
    ["dynamodb", "AWS_ENDPOINT_URL_DYNAMODB"],
    ["sqs", "AWS_ENDPOINT_URL_SQS"],
  ] as const) {
    const url = entries[key];
    const port = url && URL.canParse(url) ? Number(new URL(url).port) : 0;
    if (Number.isInteger(port) && port > 0 && port < 65_536) out[which] = port;
  }
  return out;
}

/** The port of the emulator's endpoint (`http://127.0.0.1:PORT`). */
export function portOf(endpoints: Endpoints, which: Which): number {
  const url = which === "dynamodb" ? endpoints.dynamodbEndpoint : endpoints.sqsEndpoint;
  return Number(new URL(url).port);
}

/** Forks one emulator on `port` (0: a free one), answering `allowedHosts` too. */
function startEmulator(
  dataDir: string,
  only: Which,
  port: number,
  allowedHosts: readonly string[],
): Promise<Child<Endpoints>> {
  // The port goes before `only`: tools that find the children match the command line's end.
  return forkChild(
    MAIN,
    [dataDir, String(port), only],
    `${only} emulator`,
    (m) => {
      const msg = m as { ready?: Endpoints; error?: string };
      if (msg.error || !msg.ready) throw new Error(msg.error ?? "the emulator process failed");
      return msg.ready;
    },
    // Standalone's own list (its flags and its environment together), not the environment's.
    { ...process.env, [ALLOWED_HOSTS_ENV]: allowedHosts.join(",") },
  );
}

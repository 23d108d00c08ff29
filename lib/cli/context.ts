/**
 * What every command gets: where to write and how to reach the API. Passing streams in
 * (instead of using `process.stdout`) lets tests run the CLI in-process.
 */
import { setTimeout } from "node:timers/promises";
import type { CliSettings, Env, GlobalFlags } from "./cli-config.js";
import type { ApiClient } from "./http.js";
import type { OutStream } from "./out-stream.js";

/** The streams the CLI writes to. */
export interface CliIo {
  stdout: OutStream;
  stderr: OutStream;
  /**
   * Ends commands that run until interrupted (`instances --watch`) the way Ctrl-C does, with
   * exit 0. Without it such a command listens for SIGINT itself.
   */
  signal?: AbortSignal;
}

/** Shared by all commands of one `main()` call. */
export interface CliContext {
  io: CliIo;
  /**
   * The API client for the resolved settings (built when a command first asks, after parsing):
   * unauthenticated, SigV4-signing (auth iam) or sending SHOAL_TOKEN (auth jwt).
   * @throws UsageError for an invalid endpoint, an IAM endpoint without a region, or auth jwt
   *   without SHOAL_TOKEN; CliError for an invalid config file.
   */
  api(): ApiClient;
  /** The environment of this run: process.env as it was when `main()` was called. */
  env: Env;
  /** The global options as given on the command line (a leaf command's own win). */
  flags(): GlobalFlags;
  /**
   * Endpoint, auth, region, service and profile with where each came from (cli-config.ts),
   * resolved on first call.
   * @throws CliError for an unreadable or invalid config file; UsageError for a bad SHOAL_AUTH.
   */
  settings(): CliSettings;
  /** Writes one line to stdout. */
  out(line: string): void;
  /** Writes `error: <message>` to stderr (for failures that do not stop the command). */
  err(message: string): void;
  /** Exit code `main()` returns when the command completes without throwing. */
  exitCode: number;
}

/** Interval of every poll loop (`run --wait`, `logs --follow`). */
export const POLL_INTERVAL_MS = 500;

/**
 * Resolves after `ms` milliseconds, or at once when `signal` aborts (never rejects), so a
 * poll loop can stop in the middle of its wait.
 */
export function sleepUnless(ms: number, signal: AbortSignal): Promise<void> {
  // An abort rejects the timer's promise (AbortError): that is the early end, not a failure.
  return setTimeout(ms, undefined, { signal }).catch(() => {});
}

/**
 * `shoal instances --watch`: the instance table plus a PROGRESS column, redrawn every interval
 * until Ctrl-C. A terminal is cleared and redrawn; anything else (a pipe, a CI log) gets a new
 * table only when something in it changed, so logs stay short.
 */
import { TERMINAL_INSTANCE_STATES } from "./api-states.js";
import type { Instance, InstanceSummary } from "./api-types.js";
import { type CliContext, sleepUnless } from "./context.js";
import { formatTime, table } from "./format.js";
import { type ApiClient, seg } from "./http.js";
import {
  fetchInstances,
  INSTANCE_HEADERS,
  type InstanceFilter,
  instanceCells,
} from "./instance-list.js";
import { progressText } from "./progress.js";

/** Only the newest unfinished instances, at most this many, get a PROGRESS cell (one request each per frame). */
export const MAX_PROGRESS_LOOKUPS = 20;
/** Progress requests in flight at once. */
const PROGRESS_CONCURRENCY = 5;
/** Clears a terminal and puts the cursor top left. */
const CLEAR_SCREEN = "\x1b[2J\x1b[H";
/** PROGRESS goes right after STATE. */
const PROGRESS_COLUMN = INSTANCE_HEADERS.indexOf("STATE") + 1;

/** One drawing of the table; `key` changes only when a row's content does (not as durations tick). */
interface Frame {
  text: string;
  key: string;
}

/**
 * Shows the instances matching `filter` every `intervalSeconds` until `ctx.io.signal` aborts
 * (or, without one, until SIGINT), then returns normally. A failure before the first frame is
 * thrown; later ones are reported on stderr and retried at the next interval.
 */
export async function watchInstances(
  ctx: CliContext,
  filter: InstanceFilter,
  intervalSeconds: number,
): Promise<void> {
  const stop = interruptSignal(ctx.io.signal);
  const { signal } = stop;
  const out = ctx.io.stdout;
  const tty = out.isTTY === true;
  let lastKey: string | undefined;
  let lastText = "";
  let lastError: string | undefined;
  try {
    for (let first = true; !signal.aborted; first = false) {
      try {
        const frame = await buildFrame(ctx.api(), filter, intervalSeconds, tty, signal);
        if (tty) out.write(`${CLEAR_SCREEN}${frame.text}\n`);
        else if (frame.key !== lastKey) {
          out.write(`${lastKey === undefined ? "" : "\n"}${frame.text}\n`);
        }
        lastKey = frame.key;
        lastText = frame.text;
        lastError = undefined;
      } catch (err) {
        if (signal.aborted) break;
        // Nothing shown yet: a wrong endpoint fails the way plain `shoal instances` does.
        if (first) throw err;
        const message = err instanceof Error ? err.message : String(err);
        // A terminal keeps the last table (its time says how old it is) with the error under it.
        if (tty) out.write(`${CLEAR_SCREEN}${lastText}\n`);
        if (tty || message !== lastError) ctx.err(`${message} (retrying)`);
        lastError = message;
      }
      await sleepUnless(intervalSeconds * 1000, signal);
    }
  } finally {
    stop.dispose();
  }
}

async function buildFrame(
  api: ApiClient,
  filter: InstanceFilter,
  intervalSeconds: number,
  tty: boolean,
  signal: AbortSignal,
): Promise<Frame> {
  const { items } = await fetchInstances(api, filter, signal);
  const progress = await progressCells(api, items, signal);
  const now = Date.now();
  const header = `Every ${intervalSeconds}s  ${formatTime(new Date(now).toISOString())}${tty ? "  (Ctrl-C to stop)" : ""}`;
  const rows = items.map((i) =>
    withProgress(instanceCells(i, now), progress.get(i.instanceId) ?? "-"),
  );
  const body =
    items.length === 0 ? "no instances" : table(withProgress(INSTANCE_HEADERS, "PROGRESS"), rows);
  const key = JSON.stringify(
    items.map((i) => [i.instanceId, i.state, i.startedAt, i.endedAt, progress.get(i.instanceId)]),
  );
  return { text: `${header}\n${body}`, key };
}

function withProgress(cells: readonly string[], progress: string): string[] {
  return [...cells.slice(0, PROGRESS_COLUMN), progress, ...cells.slice(PROGRESS_COLUMN)];
}

/**
 * The API's progress (`12/58 done, 4 active, 0 failed`, progress.ts) by instance id for the
 * newest {@link MAX_PROGRESS_LOOKUPS} unfinished instances of `items` (newest first). An instance
 * that cannot be read, or has no progress yet, is left out.
 */
async function progressCells(
  api: ApiClient,
  items: readonly InstanceSummary[],
  signal: AbortSignal,
): Promise<Map<string, string>> {
  const unfinished = items
    .filter((i) => !TERMINAL_INSTANCE_STATES.has(i.state))
    .slice(0, MAX_PROGRESS_LOOKUPS);
  const cells = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    for (let i = unfinished[next++]; i !== undefined; i = unfinished[next++]) {
      try {
        const inst = await api.get<Instance>(`/v1/instances/${seg(i.instanceId)}`, {}, signal);
        const text = progressText(inst.progress);
        if (text !== undefined) cells.set(i.instanceId, text);
      } catch (err) {
        if (signal.aborted) throw err;
        // Gone since the list was read, or a blip: the cell shows `-` this time.
      }
    }
  };
  const workers = Math.min(PROGRESS_CONCURRENCY, unfinished.length);
  await Promise.all(Array.from({ length: workers }, worker));
  return cells;
}

/** The caller's stop signal, or one that SIGINT aborts (and that stops listening on dispose). */
function interruptSignal(given: AbortSignal | undefined): {
  signal: AbortSignal;
  dispose(): void;
} {
  if (given) return { signal: given, dispose: () => {} };
  const controller = new AbortController();
  const onInterrupt = () => controller.abort();
  process.once("SIGINT", onInterrupt);
  return { signal: controller.signal, dispose: () => process.off("SIGINT", onInterrupt) };
}

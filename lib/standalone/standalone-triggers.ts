/**
 * Standalone's triggers: its bus's events delivered to them through a bounded queue of their own
 * (trigger-queue.ts), `--no-triggers`, and the token of its own relay of Shoal's events
 * (docs/events.md "Trigger loops and storms").
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { deliverTriggerEvent } from "../api/trigger-delivery.js";
import { ENV } from "../aws/config.js";
import { reachesTriggers } from "../core/state-events.js";
import type { BusEvent, LocalEventBus } from "../events/local-event-bus.js";
import type { Log } from "../runtime/log.js";
import type { Runtime } from "../runtime/runtime.js";
import { ENDPOINTS_FILE, readEnvFileEntries } from "./env-file.js";
import { TriggerQueue } from "./trigger-queue.js";

/**
 * Delivers the bus's events that reach triggers through a bounded queue, so that a storm of
 * state changes waits there rather than in front of the API.
 * @returns stop: drops what is queued and waits up to 1 s for the deliveries under way.
 */
export function deliverBusToTriggers(
  bus: LocalEventBus,
  runtime: Runtime,
  log: Log,
): () => Promise<void> {
  const queue = new TriggerQueue<BusEvent>({
    deliver: (event) => deliverTriggerEvent(runtime.api, event),
    log,
  });
  bus.subscribe(async (event) => {
    if (reachesTriggers(event)) queue.push(event);
  });
  return () => queue.stop(1_000);
}

/** The relay token of the last run on `dataDir` (endpoints.env), else a new one. */
export function relayTokenOf(dataDir: string): string {
  try {
    const previous = readEnvFileEntries(resolve(dataDir, ENDPOINTS_FILE))[ENV.eventsRelayToken];
    if (previous) return previous;
  } catch {
    // No file yet: a new data dir.
  }
  return randomUUID();
}

/** `--no-triggers`: sets every trigger OFFLINE; @returns how many were online. */
export async function allTriggersOffline(runtime: Runtime, log: Log): Promise<number> {
  const triggers = runtime.api.scheduling.triggers;
  let n = 0;
  let token: string | undefined;
  do {
    const page = await triggers.listTriggers(200, token);
    for (const t of page.items) {
      if (t.state === "OFFLINE") continue;
      if (await triggers.setTriggerState(t.id, "OFFLINE")) n++;
    }
    token = page.nextToken;
  } while (token);
  if (n > 0) log("standalone: --no-triggers set every trigger OFFLINE", { count: n });
  return n;
}

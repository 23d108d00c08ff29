/**
 * A Worker on an in-process runtime (lib/runtime/runtime.ts), configured as standalone configures
 * one (5 s leases, a renewal every 200 ms): for the engine tests that drive a worker by hand.
 */
import { Worker, type WorkerDeps } from "../../lib/engine/worker.js";
import type { Runtime } from "../../lib/runtime/runtime.js";

/**
 * A worker on the runtime's store, queues, logs and clients, with task directories under
 * `dataDir`; `extra` replaces any of those (a store that fails, queues that lose a message, …).
 */
export function runtimeWorker(rt: Runtime, dataDir: string, extra: Partial<WorkerDeps> = {}) {
  return new Worker({
    store: rt.engine.store,
    queues: rt.engine.queues,
    logs: rt.api.logs,
    now: Date.now,
    dataDir,
    leaseMs: 5_000,
    leaseRenewMs: 200,
    visibilityTimeoutSeconds: 900,
    clients: rt.clients,
    ...extra,
  });
}

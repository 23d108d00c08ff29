/**
 * What the schedule sweepers did in a run of the schedules scenario, seen from the outside:
 * wrappers on the stores and queues they call (fire records, signals, schedule updates, due
 * queries, errors) and the client-side latency of every AWS request.
 */
import { performance } from "node:perf_hooks";
import type { AwsClients } from "../lib/aws/clients.js";
import type { Runtime } from "../lib/runtime/runtime.js";
import { epochNow } from "./instrumentation.js";

/** What the sweepers did, seen through wrappers on the stores and queues they call. */
export interface FireLog {
  /** Epoch ms at which each new fire record was written, and its ledger actualTime. */
  written: number[];
  actual: number[];
  duplicates: number;
  /** First time each START command's signal was accepted, by command id. */
  signalled: Map<string, number>;
  updated: number[];
  lostUpdates: number;
  listDue: number;
  staleReads: number;
  errors: Map<string, number>;
  /** When a fire record, signal or schedule update was last written (epoch ms). */
  lastProgress: number;
}

/**
 * Wraps the runtime's fire, schedule and queue ports (and the sweeper's log) in place, so that
 * every sweeper the runtime makes afterwards is seen. @returns the log they fill.
 */
export function instrumentFires(rt: Runtime): FireLog {
  const log: FireLog = {
    written: [],
    actual: [],
    duplicates: 0,
    signalled: new Map(),
    updated: [],
    lostUpdates: 0,
    listDue: 0,
    staleReads: 0,
    errors: new Map(),
    lastProgress: 0,
  };
  const s = rt.scheduling;
  const { fires, schedules, queues } = s;
  const putFire = fires.putFire.bind(fires);
  fires.putFire = async (f) => {
    const ok = await putFire(f);
    if (ok) {
      log.lastProgress = epochNow();
      log.written.push(log.lastProgress);
      log.actual.push(f.actualTime);
    } else log.duplicates++;
    return ok;
  };
  const getSchedule = schedules.getSchedule.bind(schedules);
  schedules.getSchedule = async (id) => {
    const r = await getSchedule(id);
    if (r?.nextFireTime === undefined) log.staleReads++;
    return r;
  };
  const updateSchedule = schedules.updateSchedule.bind(schedules);
  schedules.updateSchedule = async (rec) => {
    const ok = await updateSchedule(rec);
    if (ok) {
      log.lastProgress = epochNow();
      log.updated.push(log.lastProgress);
    } else log.lostUpdates++;
    return ok;
  };
  const listDue = schedules.listDue.bind(schedules);
  schedules.listDue = (shard, before, limit) => {
    log.listDue++;
    return listDue(shard, before, limit);
  };
  const noteSignal = (id: string) => {
    log.lastProgress = epochNow();
    if (!log.signalled.has(id)) log.signalled.set(id, log.lastProgress);
  };
  const delayed = queues.sendDelayedSignal.bind(queues);
  queues.sendDelayedSignal = async (event, delaySeconds) => {
    await delayed(event, delaySeconds);
    noteSignal(event.commandId);
  };
  const send = queues.sendToDispatcher.bind(queues);
  queues.sendToDispatcher = async (events) => {
    await send(events);
    for (const e of events) if (e.kind === "command") noteSignal(e.commandId);
  };
  // The sweeper reports failed fires through its log (quiet otherwise): count them.
  s.log = (msg, fields) => {
    const key = `${msg}: ${String(fields?.error ?? fields?.started ?? "")
      .split("\n")[0]
      ?.slice(0, 120)}`;
    log.errors.set(key, (log.errors.get(key) ?? 0) + 1);
  };
  return log;
}

/** Client-side latency of every AWS request while `on()`, by `Service.Operation`. */
export function timeRequests(clients: AwsClients, on: () => boolean): Map<string, number[]> {
  const lat = new Map<string, number[]>();
  const mw = (service: string) =>
    ((next: (a: unknown) => Promise<unknown>, ctx: { commandName?: string }) =>
      async (args: unknown) => {
        const t = performance.now();
        try {
          return await next(args);
        } finally {
          if (on()) {
            const op = `${service}.${(ctx.commandName ?? "?").replace(/Command$/, "")}`;
            const list = lat.get(op) ?? [];
            lat.set(op, list);
            list.push(performance.now() - t);
          }
        }
      }) as never;
  clients.dynamo.middlewareStack.add(mw("DynamoDB"), {
    step: "initialize",
    name: "benchSchedTimer",
  });
  clients.sqs.middlewareStack.add(mw("SQS"), { step: "initialize", name: "benchSchedTimer" });
  return lat;
}

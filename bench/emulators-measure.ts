/**
 * What the emulators scenario's measurements share (emulators.ts, emulators-dynamodb.ts,
 * emulators-sqs.ts): timing one operation after another or with concurrent callers, the process
 * CPU each operation cost, and the context one store's measurements run in.
 */
import { performance } from "node:perf_hooks";
import type { AwsClients } from "../lib/aws/clients.js";
import type { resourceNames } from "../lib/aws/config.js";
import { round, type summarize } from "./stats.js";

/** Process CPU (user+system, all threads: client, emulator, GC, libuv pool) per operation of the last timeEach/rate. */
let lastCpuMs = Number.NaN;

/** Process CPU per operation of the last timeEach/rate, ms (NaN before the first). */
export function lastCpuMsPerOp(): number {
  return lastCpuMs;
}

/** Times `n` calls of `fn`, one after another. @returns each call's latency, ms. */
export async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  lastCpuMs = n > 0 ? (used.user + used.system) / 1000 / n : Number.NaN;
  return out;
}

/** Operations per second with `concurrency` callers, `n` operations in all. */
export async function rate(
  n: number,
  concurrency: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const cpu = process.cpuUsage();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  const used = process.cpuUsage(cpu);
  lastCpuMs = (used.user + used.system) / 1000 / n;
  return round(n / ((performance.now() - t) / 1000), 0);
}

/** One line of the emulators table (and one entry of its JSON summary). */
export interface Row {
  what: string;
  store: string;
  s: ReturnType<typeof summarize>;
  perSecond?: number;
  /** Process CPU per operation, ms. */
  cpuMs?: number;
}

/** The emulators and resources one store's measurements run against, and where rows go. */
export interface MeasureContext {
  ddb: AwsClients["dynamo"];
  sqs: AwsClients["sqs"];
  names: ReturnType<typeof resourceNames>;
  eventsUrl: string;
  taskUrl: string;
  /** Operations per one-at-a-time figure. */
  N: number;
  /** Requests per batched figure (each of 10 or 25 items). */
  B: number;
  /** "on disk" or "in memory". */
  store: string;
  rows: Row[];
  /** Adds a latency row (ms per operation) with the CPU of the last timeEach/rate. */
  add(what: string, list: number[], perSecond?: number): void;
}

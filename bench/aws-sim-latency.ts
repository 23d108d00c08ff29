/**
 * AWS's in-region request latency, put on the SDK clients of the AWS simulation (aws-sim.ts): an
 * `initialize`-step middleware that waits a latency drawn per operation before the call goes to
 * the local backend (emulators or embedded). The distributions are piecewise lognormal through
 * three percentiles (p50, p90, p99) per operation; the figures and their sources are listed in
 * docs/aws-simulation.md ("The latency model"). Random numbers are seeded, so two runs draw the
 * same sequence per client bundle.
 *
 * ReceiveMessage long polls (WaitTimeSeconds > 0) are outstanding anyway while a queue is empty:
 * they wait nothing before the call, and draw the receive latency after it when messages came back
 * (the time SQS takes to hand over what arrived). Short receives wait before, like any call.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { AwsClients } from "../lib/aws/clients.js";

/** Latency percentiles of one operation, ms. */
export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

/**
 * In-region latency as a Lambda function sees it (SDK call to response), by `Service.Operation`
 * (the names lib/aws/clients.ts's RequestCounter uses). Sources: docs/aws-simulation.md.
 */
export const AWS_LATENCY: Record<string, Percentiles> = {
  "DynamoDB.GetItem": { p50: 4, p90: 7, p99: 20 },
  "DynamoDB.Query": { p50: 5, p90: 9, p99: 25 },
  "DynamoDB.PutItem": { p50: 6, p90: 10, p99: 30 },
  "DynamoDB.UpdateItem": { p50: 6, p90: 10, p99: 30 },
  "DynamoDB.DeleteItem": { p50: 6, p90: 10, p99: 30 },
  "DynamoDB.BatchWriteItem": { p50: 10, p90: 18, p99: 50 },
  "DynamoDB.BatchGetItem": { p50: 6, p90: 12, p99: 35 },
  "DynamoDB.TransactWriteItems": { p50: 14, p90: 25, p99: 60 },
  "DynamoDB.*": { p50: 6, p90: 10, p99: 30 },
  "SQS.SendMessage": { p50: 20, p90: 35, p99: 90 },
  "SQS.SendMessageBatch": { p50: 25, p90: 45, p99: 110 },
  "SQS.ReceiveMessage": { p50: 20, p90: 40, p99: 120 },
  "SQS.DeleteMessageBatch": { p50: 15, p90: 30, p99: 80 },
  "SQS.DeleteMessage": { p50: 12, p90: 25, p99: 70 },
  "SQS.ChangeMessageVisibility": { p50: 12, p90: 25, p99: 70 },
  "SQS.*": { p50: 15, p90: 30, p99: 80 },
  "EventBridge.PutEvents": { p50: 20, p90: 40, p99: 100 },
  /** Lambda's event source mapping: from a receive that returned messages to the function's start. */
  "Lambda.EsmInvoke": { p50: 10, p90: 25, p99: 80 },
};

/** `aws`: the model above; `zero`: no added latency (to measure the harness and backend alone). */
export type LatencyMode = "aws" | "zero";

/** A seeded uniform generator on [0, 1) (mulberry32: small, fast, good enough for a simulation). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const Z90 = 1.2815515655446004;
const Z99 = 2.3263478740408408;

/**
 * The latency (ms) at standard-normal quantile `z` of the piecewise lognormal through `p`: below
 * the p90 its log-spread comes from p50→p90, above it from p90→p99, so all three percentiles
 * hold exactly and the tail is as long as p99 says.
 * @throws Error when the percentiles are not positive and increasing.
 */
export function latencyAt(p: Percentiles, z: number): number {
  if (!(p.p50 > 0 && p.p90 >= p.p50 && p.p99 >= p.p90)) {
    throw new Error(`percentiles must be > 0 and p50 ≤ p90 ≤ p99: ${JSON.stringify(p)}`);
  }
  const s1 = (Math.log(p.p90) - Math.log(p.p50)) / Z90;
  if (z <= Z90) return Math.exp(Math.log(p.p50) + s1 * z);
  const s2 = (Math.log(p.p99) - Math.log(p.p90)) / (Z99 - Z90);
  return Math.exp(Math.log(p.p90) + s2 * (z - Z90));
}

/** A standard normal draw from two uniforms (Box–Muller). */
export function normal(rand: () => number): number {
  const u = Math.max(rand(), Number.MIN_VALUE);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** Draws latencies by operation from `model` with `rand`. */
export class LatencySampler {
  constructor(
    private readonly rand: () => number,
    private readonly model: Record<string, Percentiles> = AWS_LATENCY,
  ) {}

  /** A latency (ms) for `op` (`Service.Operation`); the service's `*` entry when not listed, else 0. */
  draw(op: string): number {
    const p = this.model[op] ?? this.model[`${op.split(".")[0]}.*`];
    return p ? latencyAt(p, normal(this.rand)) : 0;
  }
}

/** The document client's command names, as the low-level operation they send. */
const DOC_COMMANDS: Record<string, string> = {
  Get: "GetItem",
  Put: "PutItem",
  Update: "UpdateItem",
  Delete: "DeleteItem",
  BatchWrite: "BatchWriteItem",
  BatchGet: "BatchGetItem",
  TransactWrite: "TransactWriteItems",
  TransactGet: "TransactGetItems",
};

/** `Service.Operation` of a command (`GetCommand` → `DynamoDB.GetItem`). */
export function operationName(service: string, commandName: string | undefined): string {
  const bare = (commandName ?? "Unknown").replace(/Command$/, "");
  return `${service}.${DOC_COMMANDS[bare] ?? bare}`;
}

/** Per operation: calls, the simulated wait and the backend's own time (ms, summed and listed). */
export class LatencyLedger {
  readonly byOp = new Map<string, { simulatedMs: number[]; backendMs: number[] }>();

  record(op: string, simulatedMs: number, backendMs: number): void {
    let e = this.byOp.get(op);
    if (!e) {
      e = { simulatedMs: [], backendMs: [] };
      this.byOp.set(op, e);
    }
    e.simulatedMs.push(simulatedMs);
    e.backendMs.push(backendMs);
  }

  reset(): void {
    this.byOp.clear();
  }
}

type Next = (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>;

/** Adds the latency middleware to a bundle's DynamoDB and SQS clients. */
export function addSimulatedLatency(
  clients: AwsClients,
  opts: { mode: LatencyMode; sampler: LatencySampler; ledger: LatencyLedger },
): void {
  const mw =
    (service: string) =>
    (next: Next, ctx: { commandName?: string }) =>
    async (args: { input: Record<string, unknown> }) => {
      const op = operationName(service, ctx.commandName);
      const longPoll = op === "SQS.ReceiveMessage" && Number(args.input.WaitTimeSeconds ?? 0) > 0;
      let waited = 0;
      if (opts.mode === "aws" && !longPoll) {
        waited = opts.sampler.draw(op);
        await delay(waited);
      }
      const t = performance.now();
      const r = await next(args);
      const backendMs = performance.now() - t;
      const got = (r.output as { Messages?: unknown[] } | undefined)?.Messages?.length ?? 0;
      if (opts.mode === "aws" && longPoll && got > 0) {
        waited = opts.sampler.draw(op);
        await delay(waited);
      }
      // An empty long poll's backend time is its wait, not a request's cost.
      if (!(longPoll && got === 0)) opts.ledger.record(op, waited, backendMs);
      return r;
    };
  const add = (client: unknown, service: string) =>
    (
      client as {
        middlewareStack: { add(m: unknown, o: { step: string; name: string }): void };
      }
    ).middlewareStack.add(mw(service), { step: "initialize", name: "shoalAwsSimLatency" });
  add(clients.dynamo, "DynamoDB");
  add(clients.sqs, "SQS");
}

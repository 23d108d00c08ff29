/**
 * Lambda's SQS event source mapping (ESM), simulated for the AWS simulation (aws-sim.ts): pollers
 * that long-poll a queue, invoke a function with the batch, delete what succeeded and scale, as
 * "Using Lambda with Amazon SQS" and "Configuring scaling behavior for SQS event source mappings"
 * describe:
 * - a standard queue starts with five concurrent batches and allows up to 300 more a minute
 *   while messages keep coming, up to `maxConcurrency`; pollers hand batches to invocations and
 *   keep reading while a slot is free; an idle poller above five stops;
 * - a FIFO queue: one message group's messages in order, up to 10 a batch, one batch per group in
 *   flight (aws-sim-fifo.ts), so concurrency is at most the number of active groups;
 * - `reportBatchItemFailures`: successes are deleted (DeleteMessageBatch), failures stay and come
 *   back after the visibility timeout; in a FIFO batch everything from the first failure on stays;
 * - a batching window (0 unless configured, as in cdk/shoal.ts) keeps receiving until the batch is
 *   full or the window is over;
 * - each new concurrent function instance waits a cold start before its first invocation, and
 *   every invocation waits the ESM's own hand-over latency (`Lambda.EsmInvoke`).
 * The rules are pure functions here (tested in test/unit/aws-sim.test.ts); the poller uses them.
 */
import { setTimeout as delay } from "node:timers/promises";
import { type Message, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { queueArn, sqsRecordOf } from "../lib/standalone/lambda-events.js";
import { MessageDeleter } from "../lib/standalone/message-deleter.js";
import { FifoBatches } from "./aws-sim-fifo.js";

/** Concurrent batches an SQS ESM starts with (AWS docs: "five batches at a time"). */
export const ESM_START_CONCURRENCY = 5;
/** Pollers added per minute while messages keep coming (AWS docs: "up to 300 more instances per minute"). */
export const ESM_SCALE_UP_PER_MINUTE = 300;
/** Long-poll wait of the ESM's receives, s (it uses long polling: the SQS maximum). */
export const ESM_WAIT_SECONDS = 20;

/** How many pollers may run `elapsedMs` after messages first arrived (5, then +300 a minute, to `max`). */
export function allowedPollers(elapsedMs: number, max: number): number {
  const grown = ESM_START_CONCURRENCY + Math.floor((elapsedMs / 60_000) * ESM_SCALE_UP_PER_MINUTE);
  return Math.max(1, Math.min(max, grown));
}

/**
 * Which records of a batch are deleted after the function returned `response` (ReportBatchItemFailures).
 * An identifier that names no record fails the whole batch (AWS: "Lambda treats the batch as a
 * complete failure"); in a FIFO batch the first failure and every record after it stay, so the
 * group's order holds.
 * @param threw the invocation failed as a whole (error or timeout): nothing is deleted.
 */
export function recordsToDelete<R extends { messageId: string }>(
  records: readonly R[],
  response: SQSBatchResponse | undefined,
  fifo: boolean,
  threw = false,
): R[] {
  if (threw || !response) return threw ? [] : [...records];
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  if ([...failed].some((id) => !records.some((r) => r.messageId === id))) return [];
  if (!fifo) return records.filter((r) => !failed.has(r.messageId));
  const first = records.findIndex((r) => failed.has(r.messageId));
  return first < 0 ? [...records] : records.slice(0, first);
}

/** One invocation as the simulation saw it (epoch ms). */
export interface InvocationRecord {
  fn: string;
  queue: string;
  messages: number;
  cold: boolean;
  startMs: number;
  endMs: number;
}

/**
 * A Lambda function: a pool of instances, each built once (its own runtime, like a sandbox) and
 * used by one invocation at a time; a new instance waits `coldStartMs` first.
 */
export class SimulatedFunction {
  private readonly idle: Array<(e: SQSEvent) => Promise<SQSBatchResponse>> = [];
  /** Instances created so far (= cold starts). */
  instances = 0;
  readonly invocations: InvocationRecord[] = [];

  constructor(
    readonly name: string,
    private readonly makeInstance: () => (e: SQSEvent) => Promise<SQSBatchResponse>,
    private readonly coldStartMs: number,
  ) {}

  /** Runs `event` on an idle instance, or on a new one after its cold start. */
  async invoke(queue: string, event: SQSEvent): Promise<SQSBatchResponse> {
    const startMs = Date.now();
    let handler = this.idle.pop();
    const cold = !handler;
    if (!handler) {
      this.instances++;
      handler = this.makeInstance();
      await delay(this.coldStartMs);
    }
    try {
      return await handler(event);
    } finally {
      this.idle.push(handler);
      this.invocations.push({
        fn: this.name,
        queue,
        messages: event.Records.length,
        cold,
        startMs,
        endMs: Date.now(),
      });
    }
  }
}

/** One event source mapping (cdk/shoal.ts's `SqsEventSource` settings). */
export interface EsmOptions {
  sqs: SQSClient;
  queueUrl: string;
  fifo: boolean;
  batchSize: number;
  maxConcurrency: number;
  /** MaximumBatchingWindowInSeconds × 1000 (0: invoke with what one receive brings). */
  batchingWindowMs?: number;
  region: string;
  fn: SimulatedFunction;
  /** Simulated latency of `op` (`Lambda.EsmInvoke`, `SQS.DeleteMessageBatch`), ms, drawn per call. */
  latencyMs: (op: string) => number;
  /** FIFO only: a client of the same backend without simulated latency (aws-sim-fifo.ts). */
  rawSqs?: SQSClient;
  onError?: (e: unknown) => void;
}

/** Pollers of one queue, scaled as the ESM scales them. */
export class SimulatedEsm {
  private running = false;
  private pollers = 0;
  /** When messages started arriving after an idle spell (the scale-up clock), epoch ms. */
  private activeSince: number | undefined;
  private abort = new AbortController();
  private readonly loops = new Set<Promise<void>>();
  private readonly deleter: MessageDeleter;
  /** Most pollers seen at once. */
  peakPollers = 0;
  /** Most batches in flight at once (the function's concurrency from this mapping). */
  peakInFlight = 0;

  private readonly fifo: FifoBatches | undefined;

  constructor(private readonly o: EsmOptions) {
    this.deleter = new MessageDeleter(o.sqs, (e) => this.o.onError?.(e));
    if (o.fifo) {
      if (!o.rawSqs) throw new Error("a FIFO mapping needs rawSqs");
      this.fifo = new FifoBatches({
        raw: o.rawSqs,
        queueUrl: o.queueUrl,
        batchSize: o.batchSize,
        ...(o.onError ? { onError: o.onError } : {}),
      });
    }
  }

  /** Starts polling (again, after {@link stop}: a paused mapping resumes with five pollers). */
  start(): void {
    this.running = true;
    this.abort = new AbortController();
    this.fifo?.start();
    for (let i = 0; i < Math.min(ESM_START_CONCURRENCY, this.o.maxConcurrency); i++) this.spawn();
  }

  /** Stops polling (as disabling the mapping does); waits for invocations under way. */
  async stop(): Promise<void> {
    this.running = false;
    this.resume();
    this.activeSince = undefined;
    this.abort.abort();
    await this.fifo?.stop();
    await Promise.all(this.loops);
    await Promise.all(this.handling);
    await this.deleter.flush();
  }

  private paused: { until: Promise<void>; resume: () => void } | undefined;

  /**
   * Holds invocations (a bench's pause, to let a backlog build): receives already waiting may
   * still take messages, which are held and handed over first on {@link resume}. Keep a pause
   * shorter than the queue's visibility timeout.
   */
  pause(): void {
    if (this.paused) return;
    let resume: () => void = () => {};
    const until = new Promise<void>((r) => {
      resume = r;
    });
    this.paused = { until, resume };
  }

  resume(): void {
    this.paused?.resume();
    this.paused = undefined;
  }

  private spawn(): void {
    this.pollers++;
    this.peakPollers = Math.max(this.peakPollers, this.pollers);
    const p = this.poll()
      .catch((e) => this.o.onError?.(e))
      .finally(() => {
        this.pollers--;
        this.loops.delete(p);
      });
    this.loops.add(p);
  }

  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const r = await this.o.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.o.queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ["All"],
      }),
      { abortSignal: this.abort.signal },
    );
    return r.Messages ?? [];
  }

  /** Fills a batch: one receive, or receives until full or the batching window is over. */
  private async batch(): Promise<Message[]> {
    const first = await this.receive(this.o.batchSize, ESM_WAIT_SECONDS);
    const windowMs = this.o.batchingWindowMs ?? 0;
    if (first.length === 0 || windowMs <= 0 || this.o.fifo) return first;
    const until = Date.now() + windowMs;
    const msgs = [...first];
    while (msgs.length < this.o.batchSize && Date.now() < until && this.running) {
      const wait = Math.min(ESM_WAIT_SECONDS, Math.ceil((until - Date.now()) / 1000));
      msgs.push(...(await this.receive(this.o.batchSize - msgs.length, wait)));
    }
    return msgs;
  }

  /** Batches being handled (invocations in flight, with their receive and delete latency). */
  private inFlight = 0;
  private readonly handling = new Set<Promise<void>>();
  private slotWaiters: Array<() => void> = [];

  /** Concurrent batches allowed now: five, growing by 300 a minute while messages keep coming. */
  private limit(): number {
    if (this.activeSince === undefined)
      return Math.min(ESM_START_CONCURRENCY, this.o.maxConcurrency);
    return allowedPollers(Date.now() - this.activeSince, this.o.maxConcurrency);
  }

  /**
   * Waits for a free concurrency slot and takes it in the same step (re-checked every 100 ms: the
   * limit grows with time). @returns false once stopped (no slot taken).
   */
  private async takeSlot(): Promise<boolean> {
    while (this.running && this.inFlight >= this.limit()) {
      await Promise.race([
        new Promise<void>((r) => this.slotWaiters.push(r)),
        delay(100, undefined, { ref: false }),
      ]);
    }
    if (!this.running) return false;
    // Taken before the receive, with no await between check and take: pollers that wait
    // together do not overshoot the limit.
    this.inFlight++;
    return true;
  }

  /**
   * A poller: waits for a concurrency slot, receives a batch and hands it to an invocation without
   * waiting for it (Lambda's pollers keep reading while invocations run), as the scaling allows.
   */
  private async poll(): Promise<void> {
    while (this.running) {
      await this.paused?.until;
      if (!(await this.takeSlot())) return;
      let msgs: Message[];
      let group: string | undefined;
      try {
        if (this.fifo) {
          const b = await this.fifo.take();
          if (!b) {
            this.freeSlot();
            return;
          }
          msgs = b.msgs;
          group = b.group;
        } else msgs = await this.batch();
      } catch (e) {
        this.freeSlot();
        if (!this.running) return;
        this.o.onError?.(e);
        await delay(1_000);
        continue;
      }
      if (msgs.length === 0) {
        this.freeSlot();
        if (this.inFlight === 0) this.activeSince = undefined;
        // Back to five when traffic stops.
        if (this.pollers > ESM_START_CONCURRENCY) return;
        continue;
      }
      this.activeSince ??= Date.now();
      // One more poller per full batch, within what the scale-up rate allows by now.
      const more = msgs.length >= this.o.batchSize || this.fifo?.hasFree();
      if (more && this.pollers < this.limit()) this.spawn();
      this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
      const p = this.handle(msgs, group).finally(() => {
        this.handling.delete(p);
        this.freeSlot();
      });
      this.handling.add(p);
    }
  }

  private freeSlot(): void {
    this.inFlight--;
    const w = this.slotWaiters;
    this.slotWaiters = [];
    for (const f of w) f();
  }

  private async handle(msgs: Message[], group: string | undefined): Promise<void> {
    await this.paused?.until;
    if (this.fifo && group !== undefined) {
      // The receive that returned this batch, as SQS would answer it.
      await delay(this.o.latencyMs("SQS.ReceiveMessage"));
      const failed = await this.invoke(msgs);
      // The DeleteMessageBatch of the batch's successes, as SQS would take it.
      await delay(this.o.latencyMs("SQS.DeleteMessageBatch"));
      this.fifo.release(group, failed);
    } else await this.invoke(msgs);
  }

  /** Invokes the function with `msgs`, deletes what succeeded; @returns the failed messages. */
  private async invoke(msgs: Message[]): Promise<Message[]> {
    const arn = queueArn(this.o.queueUrl, this.o.region);
    const now = Date.now();
    const records = msgs.map((m) => sqsRecordOf(m, arn, this.o.region, now));
    await delay(this.o.latencyMs("Lambda.EsmInvoke"));
    let response: SQSBatchResponse | undefined;
    let threw = false;
    try {
      response = await this.o.fn.invoke(this.o.queueUrl, { Records: records });
    } catch (e) {
      threw = true;
      this.o.onError?.(e);
    }
    const done = new Set(recordsToDelete(records, response, this.o.fifo, threw));
    const failed = msgs.filter((_, i) => !done.has(records[i] as SQSRecord));
    // FIFO messages left the queue when received (aws-sim-fifo.ts): nothing to delete.
    if (!this.fifo) {
      await Promise.all([...done].map((r) => this.deleter.add(this.o.queueUrl, r.receiptHandle)));
    }
    return failed;
  }
}

/**
 * The time (ms) a standard-queue ESM needs to start `n` invocations (of one batch each) that each take
 * `invocationMs`, scaling as {@link allowedPollers} allows up to `maxConcurrency`: the floor
 * that Lambda's scaling puts under a wide fan-out's "last task claimed".
 */
export function esmDrainMs(n: number, invocationMs: number, maxConcurrency: number): number {
  const stepMs = 10;
  let started = 0;
  let t = 0;
  while (started < n) {
    started += (allowedPollers(t, maxConcurrency) * stepMs) / invocationMs;
    t += stepMs;
  }
  return t;
}

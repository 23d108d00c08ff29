/**
 * Feeds SQS messages to a Lambda-style handler the way an SQS event source mapping does: receive
 * (long polling), invoke with an SQS event, delete what succeeded, leave failures to come back
 * (here after a short backoff rather than the full visibility timeout). `slots` bounds messages in
 * flight; queues are listed highest priority first and, whenever a slot frees, are swept in that
 * order, so a backlog drains by priority.
 */

import { setTimeout as delay } from "node:timers/promises";
import {
  ChangeMessageVisibilityCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { FailureBackoff } from "./failure-backoff.js";
import { queueArn, sqsRecordOf } from "./lambda-events.js";
import { MessageDeleter } from "./message-deleter.js";

export interface PollerOptions {
  sqs: SQSClient;
  /** Queue URLs, highest priority first. */
  queueUrls: string[];
  /** Messages in flight at most. */
  slots: number;
  /** Messages per handler invocation (1 for workers: each task holds a slot on its own). */
  batchSize: number;
  /** Long-poll wait, seconds (1..20). */
  waitSeconds: number;
  region: string;
  handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
  /** FIFO queue: a message group unlocks when its messages are deleted, not when they arrive. */
  fifo?: boolean;
  /**
   * Also receive this many messages beyond the free slots and hold them (fewer receives per
   * message); held messages still give way to higher tiers. 0 for FIFO queues.
   */
  prefetch?: number;
  /** Test hook: hand every batch to the handler twice, concurrently (SHOAL_TEST_DELIVER_TWICE). */
  deliverTwice?: boolean;
  /**
   * Visibility timeout asked for on receive, seconds (the queue's own when absent). Task
   * pollers ask for a short one: a message a killed poller received but never saw comes back
   * soon instead of after the queue's 15 minutes; the worker extends it once it runs the task.
   */
  receiveVisibilitySeconds?: number;
  onError?: (e: unknown) => void;
}

/**
 * Waits between receives after failed ones (the queue unreachable: an emulator restarting, a
 * standalone gone), ms: doubling from the first, up to the last, so that a poller left without
 * its queue neither spins nor floods its log.
 */
const RECEIVE_BACKOFF_MS = { first: 500, max: 30_000 } as const;

/** How long a stopping poller lets its waiting long polls answer before it cuts them, ms. */
const LONG_POLL_DRAIN_MS = 2_000;

/** Messages a poller may hold beyond its free slots (answers of long polls that came late). */
const MAX_HELD = 10;

export class QueuePoller {
  private running = false;
  /** Receives that failed in a row, and the wait they call for. */
  private readonly receives = new FailureBackoff(RECEIVE_BACKOFF_MS.first, RECEIVE_BACKOFF_MS.max);
  /** Resolved when `stop` begins: cuts a backoff short. */
  private onStop: () => void = () => {};
  private readonly stopping = new Promise<void>((resolve) => {
    this.onStop = resolve;
  });
  private inFlight = 0;
  private readonly longPolls = new Map<string, Promise<void>>();
  private readonly handlers = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private wake: (() => void) | undefined;
  private woken = false;
  private readonly deleter: MessageDeleter;
  private loop: Promise<void> | undefined;
  /** Received, waiting for a slot; `at` is when (epoch ms). */
  private readonly held: Array<{ url: string; tier: number; msg: Message; at: number }> = [];
  /** Gives back held messages that waited too long ({@link releaseStale}). */
  private staleTimer: NodeJS.Timeout | undefined;
  /**
   * Messages given back with a delay after their handler failed, by message id, until they are
   * received again: {@link retryBackedOff} makes them visible at once.
   */
  private readonly backedOff = new Map<string, { url: string; msg: Message; until: number }>();
  /** Invocations in a row whose every message failed (the store out of reach, likely). */
  private failedInvocations = 0;

  constructor(private readonly opts: PollerOptions) {
    this.deleter = new MessageDeleter(opts.sqs, (e) => this.error(e));
  }

  private error(e: unknown): void {
    if (this.running) this.opts.onError?.(e);
  }

  start(): void {
    this.running = true;
    this.loop = this.run();
    const visibility = this.opts.receiveVisibilitySeconds;
    if (visibility !== undefined) {
      this.staleTimer = setInterval(() => this.releaseStale((visibility * 1000) / 2), 500);
      this.staleTimer.unref();
    }
  }

  /**
   * Gives back the held messages that waited `maxMs` for a slot, before their short receive
   * visibility runs out: another poller with a free slot takes them now, and none is left
   * hidden behind this one (were it killed, for the rest of its visibility timeout).
   */
  private releaseStale(maxMs: number): void {
    const now = Date.now();
    for (let i = this.held.length - 1; i >= 0; i--) {
      const h = this.held[i];
      if (h && now - h.at >= maxMs) {
        this.held.splice(i, 1);
        void this.release(h.url, h.msg, 1);
      }
    }
  }

  /**
   * Makes the messages this poller gave back with a delay (after their handler failed) visible
   * again now. Called once what the handler needs is back: after invocations that all failed, at
   * the first that succeeds, and by standalone when an emulator has restarted. Without it, the
   * message of an instance that failed six times waited out 30 s of backoff after the store came
   * back, its FIFO group (the instance) blocked all that time (chaos, repeated emulator kills).
   */
  retryBackedOff(): void {
    const now = Date.now();
    for (const [id, b] of this.backedOff) {
      this.backedOff.delete(id);
      // Visible again by itself within about a second anyway: nothing to gain.
      if (b.until - now > 1_500) void this.release(b.url, b.msg, 1);
    }
  }

  /** Stops receiving and waits (up to `graceMs`) for handlers in progress. */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    this.onStop();
    clearInterval(this.staleTimer);
    this.signal();
    await this.loop;
    await Promise.race([Promise.all(this.handlers), delay(graceMs, undefined, { ref: false })]);
    // Long polls still waiting are not cut at once: an aborted request can still take a message
    // on the server side (it would then stay invisible for the visibility timeout). What they
    // bring now, such as the new attempt of a task this worker just handed back, is released.
    await Promise.race([
      Promise.all(this.longPolls.values()),
      delay(LONG_POLL_DRAIN_MS, undefined, { ref: false }),
    ]);
    this.abort.abort();
    await Promise.all([this.deleter.flush(), ...this.releases]);
  }

  /**
   * How busy the poller is: messages being handled (`used` of `slots`) and messages received and
   * held until a slot frees (`held`). A worker's heartbeat records it (lib/engine/worker-heartbeat.ts).
   */
  load(): { used: number; slots: number; held: number } {
    return { used: this.inFlight, slots: this.opts.slots, held: this.held.length };
  }

  private free(): number {
    return this.opts.slots - this.inFlight;
  }

  /** How many messages one receive asks for: the free slots plus room for prefetching. */
  private wanted(): number {
    const room = Math.max(0, Math.min(this.opts.prefetch ?? 0, MAX_HELD - this.held.length));
    return Math.min(10, this.free() + room);
  }

  /** Wakes the loop; a wake-up while it is busy is remembered, never lost. */
  private signal(): void {
    if (this.wake) this.wake();
    else this.woken = true;
  }

  private waitForWake(): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  /**
   * Counts a failed receive and reports it: the first of a run, then the 2nd, 4th, 8th … with
   * the count and the wait before the next, so a queue that stays unreachable costs a log line
   * now and then rather than hundreds a second.
   */
  private receiveFailed(e: unknown): void {
    if (!this.running || this.abort.signal.aborted) return;
    const report = this.receives.failed();
    if (!report) return;
    this.error(
      report.failures === 1
        ? e
        : new Error(
            `${e instanceof Error ? e.message : String(e)} (${report.failures} receives failed in a row; next in ${report.waitMs / 1000} s)`,
            { cause: e },
          ),
    );
  }

  /**
   * Waits out the backoff of failed receives, or until `stop`. The timer keeps the process
   * alive: with its queue unreachable, it may be all a worker process has left to wait for.
   */
  private async backOff(): Promise<void> {
    const ms = this.receives.remainingMs();
    if (ms > 0) {
      const timer = new AbortController();
      await Promise.race([delay(ms, undefined, { signal: timer.signal }), this.stopping]).catch(
        () => {},
      );
      timer.abort();
    }
  }

  private async receive(url: string, max: number, wait: number): Promise<Message[]> {
    const r = await this.opts.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: Math.max(1, Math.min(10, max)),
        WaitTimeSeconds: wait,
        MessageSystemAttributeNames: ["All"],
        ...(this.opts.receiveVisibilitySeconds
          ? { VisibilityTimeout: this.opts.receiveVisibilitySeconds }
          : {}),
      }),
      { abortSignal: this.abort.signal },
    );
    this.receives.succeeded();
    return r.Messages ?? [];
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (this.free() <= 0) {
        await this.waitForWake();
        continue;
      }
      await this.backOff();
      if (!this.running) break;
      try {
        // Sweep in priority order, above the best message already held; the first queue with
        // messages wins this round.
        const bestHeld = Math.min(...this.held.map((h) => h.tier), this.opts.queueUrls.length);
        let got = false;
        for (const [tier, url] of this.opts.queueUrls.entries()) {
          if (tier >= bestHeld || this.free() <= 0) break;
          // A queue with a long poll waiting was empty when asked, and what arrives since is
          // answered to that poll at once: no need to ask again. Not so for FIFO, where messages
          // can be there but locked until their group's previous batch is deleted.
          if (this.longPolls.has(url) && !this.opts.fifo) continue;
          const msgs = await this.receive(url, this.wanted(), 0);
          if (msgs.length > 0) {
            this.accept(url, msgs);
            got = true;
            break;
          }
          if (!this.opts.fifo) this.longPoll(url);
        }
        if (!this.running) continue;
        if (got && this.opts.fifo) {
          // Other groups' messages reach the long poll; this group's next batch is asked for
          // when the handler is done with this one (it stays locked until then).
          for (const url of this.opts.queueUrls) this.longPoll(url);
          await this.waitForWake();
          continue;
        }
        if (got) continue;
        if (this.held.length > 0) {
          this.held.sort((a, b) => a.tier - b.tier);
          for (const h of this.held.splice(0, this.free())) this.startHandlers(h.url, [h.msg]);
          continue;
        }
        // Idle: long-poll every queue at once; whichever answers first is taken.
        for (const url of this.opts.queueUrls) this.longPoll(url);
        await this.waitForWake();
      } catch (e) {
        if (!this.running) break;
        this.receiveFailed(e);
        // A failed receive waits out its backoff at the top of the loop; anything else here
        // is not a receive, and waits the first step.
        if (this.receives.failures === 0) await delay(RECEIVE_BACKOFF_MS.first);
      }
    }
    for (const h of this.held.splice(0)) await this.release(h.url, h.msg, 1);
  }

  /** Starts a long poll on a queue unless one is waiting there already. */
  private longPoll(url: string): void {
    if (this.longPolls.has(url) || !this.running) return;
    const p = this.receive(url, Math.max(1, this.wanted()), this.opts.waitSeconds)
      .then((msgs) => this.accept(url, msgs))
      .catch((e) => this.receiveFailed(e))
      .finally(() => {
        this.longPolls.delete(url);
        // Re-arm at once where messages can be taken: the next message of a busy standard
        // queue then arrives without a receive that comes back empty first. Not after a failed
        // receive: the loop re-arms it once the backoff is over.
        if (!this.opts.fifo && this.wanted() > 0 && this.receives.failures === 0)
          this.longPoll(url);
        this.signal();
      });
    this.longPolls.set(url, p);
  }

  /**
   * Starts handlers for received messages. A long poll can answer after the slots filled up:
   * those messages are held (a few) and weighed against the queues at the next free slot, so a
   * held HIGH message still goes before a LOW backlog; beyond that they are released.
   */
  private accept(url: string, msgs: Message[]): void {
    if (msgs.length === 0) return;
    // Received again: their earlier receipt handles are no longer theirs.
    for (const m of msgs) this.backedOff.delete(m.MessageId ?? "");
    if (!this.running) {
      // Stopped meanwhile: let them go back to the queue.
      for (const m of msgs) void this.release(url, m, 1);
      return;
    }
    if (this.opts.fifo) {
      // Never split a FIFO receive: it may hold several messages of one group, which must be
      // handled in order by one invocation (a brief overshoot of the slots is the lesser evil).
      this.startHandlers(url, msgs);
      return;
    }
    const tier = this.opts.queueUrls.indexOf(url);
    // A better message is held already: these wait behind it, and the loop starts them in order.
    const behind = this.held.some((h) => h.tier < tier);
    const take = behind ? [] : msgs.slice(0, Math.max(0, this.free()));
    for (const m of msgs.slice(take.length)) {
      if (this.held.length < MAX_HELD) this.held.push({ url, tier, msg: m, at: Date.now() });
      else void this.release(url, m, 1);
    }
    if (take.length > 0) this.startHandlers(url, take);
    if (behind) this.signal();
  }

  private startHandlers(url: string, msgs: Message[]): void {
    const size = this.opts.batchSize;
    for (let i = 0; i < msgs.length; i += size) {
      const batch = msgs.slice(i, i + size);
      this.inFlight += batch.length;
      const p = this.invoke(url, batch).finally(() => {
        this.inFlight -= batch.length;
        this.handlers.delete(p);
        this.signal();
      });
      this.handlers.add(p);
    }
  }

  /** Releases in flight; a stopping poller waits for them. */
  private readonly releases = new Set<Promise<void>>();

  private release(url: string, m: Message, seconds: number): Promise<void> {
    const p = this.sendRelease(url, m, seconds).finally(() => this.releases.delete(p));
    this.releases.add(p);
    return p;
  }

  private async sendRelease(url: string, m: Message, seconds: number): Promise<void> {
    try {
      await this.opts.sqs.send(
        // At least 1 s: fauxqs 2.x with persistence loses a message made visible with 0 (its
        // SQLite write fails after the message left the in-flight set), 1 s takes another path.
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: Math.max(1, seconds),
        }),
      );
    } catch (e) {
      this.error(e);
    }
  }

  private async invoke(url: string, batch: Message[]): Promise<void> {
    const arn = queueArn(url, this.opts.region);
    const now = Date.now();
    const records: SQSRecord[] = batch.map((m) => sqsRecordOf(m, arn, this.opts.region, now));
    let failed = new Set<string>();
    try {
      // Test hook: every message delivered twice at once, as SQS may (at-least-once delivery).
      const twice = this.opts.deliverTwice
        ? this.opts.handler({ Records: records }).catch(() => undefined)
        : undefined;
      const res = await this.opts.handler({ Records: records });
      await twice;
      failed = new Set(res.batchItemFailures.map((f) => f.itemIdentifier));
    } catch (e) {
      this.error(e);
      failed = new Set(records.map((r) => r.messageId));
    }
    const deletes: Promise<void>[] = [];
    for (const r of records) {
      if (!failed.has(r.messageId)) deletes.push(this.deleter.add(url, r.receiptHandle));
    }
    // A FIFO message group stays locked until its messages are deleted: hold the slot until then,
    // so the next receive can see the group's following messages.
    if (this.opts.fifo) await Promise.all(deletes);
    if (failed.size === 0) {
      // Through again after invocations that all failed (not one message failing among others
      // that go through: that one keeps its backoff).
      if (this.failedInvocations >= 2) this.retryBackedOff();
      this.failedInvocations = 0;
    } else if (failed.size === batch.length) this.failedInvocations++;
    for (const m of batch) {
      if (!failed.has(m.MessageId ?? "")) continue;
      // Back off 1, 2, 4 … 30 s by receive count instead of the whole visibility timeout: a
      // message that keeps failing reaches the dead-letter queue (20 receives) after minutes.
      const count = Number(
        (m.Attributes as Record<string, string> | undefined)?.ApproximateReceiveCount ?? 1,
      );
      const seconds = Math.min(30, 2 ** Math.max(0, count - 1));
      if (m.MessageId)
        this.backedOff.set(m.MessageId, { url, msg: m, until: Date.now() + seconds * 1000 });
      await this.release(url, m, seconds);
    }
  }
}

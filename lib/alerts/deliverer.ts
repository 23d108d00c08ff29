/**
 * The deliverer: works through the due delivery jobs (deliveries.ts), sends each alert
 * (send.ts) and records the outcome with conditional writes. At least once: a send is claimed
 * first (the record's `attempts` + 1 and a claim that lapses), so two deliverers never send the
 * same attempt; a deliverer that dies after sending and before recording lets the claim lapse,
 * and the next one sends again with the same delivery id (receivers deduplicate on it).
 * Retries are bounded: `delivery.attempts` sends, `delivery.backoffSeconds` apart.
 *
 * Time-bounded callers (the alerts Lambda) pass `remainingMs`: the alert's content is built
 * before the claim, a send is claimed only while one POST timeout plus a margin is left, and
 * the claim then lasts at least as long as the invocation can, so it never lapses while its
 * sender may still send (which would let a second deliverer send the same attempt).
 */
import pLimit from "p-limit";
import type { SecretSource } from "../secrets/secret-source.js";
import { type ResolvedChannel, resolveChannel } from "./channel-secrets.js";
import { type AlertsConfig, describeChannel } from "./channels.js";
import { alertContent, type ContentDeps } from "./content.js";
import type { DeliveryJob, DeliveryRecord, DeliveryStore } from "./deliveries.js";
import type { AlertContent } from "./format.js";
import { type EmailPublisher, SendError, sendAlert } from "./send.js";

/** Jobs taken per pass, and sent at once. */
const PAGE = 50;
const PARALLEL = 8;
/** A claim outlasts the send's timeout (or what is left of the caller's time) by this much. */
const CLAIM_MARGIN_MS = 20_000;
/**
 * Time a job needs besides its POST, ms: building its content (reads of the store and task
 * logs) before the claim, and the writes after the send. A job is not started with less than
 * one POST timeout plus this left, nor claimed with less than one POST timeout plus
 * {@link RECORD_MARGIN_MS} left.
 */
export const CONTENT_MARGIN_MS = 20_000;
/** Time kept for the record writes after a send, ms. */
const RECORD_MARGIN_MS = 5_000;

/** Options of one pass. */
export interface PassOptions {
  /**
   * Time the caller has left, ms (on Lambda `context.getRemainingTimeInMillis()`); absent: no
   * limit (standalone's loop).
   */
  remainingMs?: () => number;
}

export interface DelivererDeps extends ContentDeps {
  deliveries: DeliveryStore;
  config: AlertsConfig;
  now: () => number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  publishEmail?: EmailPublisher;
  fetch?: typeof fetch;
  /**
   * The secret source of channels whose URL or headers hold `${secret:NAME}` (built on first
   * use; channel-secrets.ts). Absent: such a channel's sends fail, saying so.
   */
  secrets?: () => SecretSource;
}

/** What one pass did. */
export interface DeliveryReport {
  sent: number;
  retrying: number;
  failed: number;
  /** Jobs left for a later pass: too little of the caller's time was left to send them. */
  deferred: number;
}

/** The wait before send `attempts + 1`, ms (the last backoff value repeats). */
export function backoffMs(config: AlertsConfig, attempts: number): number {
  const list = config.delivery.backoffSeconds;
  const s = list[Math.min(attempts - 1, list.length - 1)] ?? 0;
  return Math.round(s * 1000);
}

export class AlertDeliverer {
  constructor(readonly deps: DelivererDeps) {}

  /** Sends what is due now (one page of jobs). Store errors are thrown (the loop logs them). */
  async deliverDue(opts: PassOptions = {}): Promise<DeliveryReport> {
    const jobs = await this.deps.deliveries.listDueJobs(this.deps.now(), PAGE);
    return this.deliverJobs(jobs, opts);
  }

  /**
   * Sends the first job of each record just created (an event's own deliveries, sent at once
   * rather than at the next scheduled pass). Store errors are thrown.
   */
  deliverCreated(
    records: readonly DeliveryRecord[],
    opts: PassOptions = {},
  ): Promise<DeliveryReport> {
    const jobs = records.map((r) => ({
      deliveryId: r.deliveryId,
      subject: r.subject,
      dueAt: r.createdAt,
    }));
    return this.deliverJobs(jobs, opts);
  }

  private async deliverJobs(
    jobs: readonly DeliveryJob[],
    opts: PassOptions,
  ): Promise<DeliveryReport> {
    const report: DeliveryReport = { sent: 0, retrying: 0, failed: 0, deferred: 0 };
    await pLimit(PARALLEL).map([...jobs], async (job) => {
      const outcome = await this.deliverJob(job, opts);
      if (outcome) report[outcome]++;
    });
    return report;
  }

  /** Whether less than one POST timeout plus `margin` ms is left to the caller. */
  private short(opts: PassOptions, margin: number): boolean {
    if (!opts.remainingMs) return false;
    return opts.remainingMs() < this.deps.config.delivery.timeoutSeconds * 1000 + margin;
  }

  /**
   * One job: build the content, claim, send, record.
   * @returns what became of it (undefined: nothing to do; `deferred`: left for a later pass).
   */
  async deliverJob(
    job: DeliveryJob,
    opts: PassOptions = {},
  ): Promise<keyof DeliveryReport | undefined> {
    const { deliveries, config } = this.deps;
    if (this.short(opts, CONTENT_MARGIN_MS)) return "deferred";
    const rec = await deliveries.get(job.subject, job.deliveryId);
    if (rec?.status !== "PENDING" || job.dueAt < (rec.nextAttemptAt ?? rec.createdAt)) {
      // Done already, or the job of an earlier attempt (a repeated event wrote it again).
      await deliveries.deleteJob(job);
      return undefined;
    }
    if (rec.claimedUntil !== undefined && rec.claimedUntil > this.deps.now()) return undefined;
    const channel = config.channels[rec.channel];
    if (!channel) {
      const failed = this.next(rec, {
        status: "FAILED",
        lastError: `channel '${rec.channel}' is not configured in this deployment's alerts`,
      });
      if (await deliveries.update(failed)) this.logOutcome(failed, "no such channel");
      await deliveries.deleteJob(job);
      return "failed";
    }
    const timeoutMs = config.delivery.timeoutSeconds * 1000;
    // Everything slow but the POST comes before the claim, which then covers the POST only.
    // Secrets are read at each send, held for this send only: a rotated one applies to the next.
    let error: string | undefined;
    let target = describeChannel(channel);
    let ready: { resolved: ResolvedChannel; content: AlertContent } | undefined;
    try {
      const resolved = await resolveChannel(rec.channel, channel, this.deps.secrets);
      target = describeChannel(resolved.channel);
      ready = { resolved, content: await alertContent(this.deps, rec) };
    } catch (e) {
      error =
        e instanceof SendError ? e.message : `could not build the alert: ${(e as Error).message}`;
    }
    if (this.short(opts, RECORD_MARGIN_MS)) return "deferred";
    const now = this.deps.now();
    // The claim outlasts the POST and, for a time-bounded caller, the caller itself: a sender
    // stopped by its time limit sends nothing more, one that is not may still be sending.
    const holdMs = Math.max(timeoutMs, opts.remainingMs?.() ?? 0) + CLAIM_MARGIN_MS;
    const claimed = this.next(rec, { attempts: rec.attempts + 1, claimedUntil: now + holdMs });
    if (!(await deliveries.update(claimed))) return undefined;
    if (ready) {
      const { resolved, content } = ready;
      try {
        await sendAlert(resolved.channel, content, {
          timeoutMs,
          ...(this.deps.publishEmail ? { publishEmail: this.deps.publishEmail } : {}),
          ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
        });
      } catch (e) {
        // sendAlert masks the URL and header values; secret values are masked once more here.
        error = resolved.masker.mask(e instanceof SendError ? e.message : String(e));
      }
    }
    const after = this.deps.now();
    let done: DeliveryRecord;
    let outcome: keyof DeliveryReport;
    if (error === undefined) {
      done = this.next(claimed, { status: "SENT", sentAt: after });
      outcome = "sent";
    } else if (claimed.attempts >= config.delivery.attempts) {
      done = this.next(claimed, { status: "FAILED", lastError: error });
      outcome = "failed";
    } else {
      const dueAt = after + backoffMs(config, claimed.attempts);
      done = this.next(claimed, { lastError: error, nextAttemptAt: dueAt });
      // The next job first: a crash before the record write leaves a job that finds the claim.
      await deliveries.putJob({ deliveryId: rec.deliveryId, subject: rec.subject, dueAt });
      outcome = "retrying";
    }
    if (await deliveries.update(done)) {
      this.logOutcome(done, target);
      await deliveries.deleteJob(job);
    }
    return outcome;
  }

  /** The record's next revision: `patch` applied, the claim dropped. */
  private next(rec: DeliveryRecord, patch: Partial<DeliveryRecord>): DeliveryRecord {
    const out: DeliveryRecord = { ...rec, ...patch, rev: rec.rev + 1 };
    if (!("claimedUntil" in patch)) delete out.claimedUntil;
    if (out.status !== "PENDING") delete out.nextAttemptAt;
    return out;
  }

  private logOutcome(rec: DeliveryRecord, target: string): void {
    const verb = rec.status === "SENT" ? "sent" : rec.status === "FAILED" ? "failed" : "will retry";
    this.deps.log?.(`alerts: ${verb}`, {
      channel: rec.channel,
      target,
      event: rec.event,
      deliveryId: rec.deliveryId,
      attempts: rec.attempts,
      ...(rec.lastError && rec.status !== "SENT" ? { error: rec.lastError } : {}),
    });
  }
}

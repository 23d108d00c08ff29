/**
 * The deliverer: works through the due delivery jobs (deliveries.ts), sends each alert
 * (send.ts) and records the outcome with conditional writes. At least once: a send is claimed
 * first (the record's `attempts` + 1 and a claim that lapses), so two deliverers never send the
 * same attempt; a deliverer that dies after sending and before recording lets the claim lapse,
 * and the next one sends again with the same delivery id (receivers deduplicate on it).
 * Retries are bounded: `delivery.attempts` sends, `delivery.backoffSeconds` apart.
 */
import pLimit from "p-limit";
import type { SecretSource } from "../secrets/secret-source.js";
import { resolveChannel } from "./channel-secrets.js";
import { type AlertsConfig, describeChannel } from "./channels.js";
import { alertContent, type ContentDeps } from "./content.js";
import type { DeliveryJob, DeliveryRecord, DeliveryStore } from "./deliveries.js";
import { type EmailPublisher, SendError, sendAlert } from "./send.js";

/** Jobs taken per pass, and sent at once. */
const PAGE = 50;
const PARALLEL = 8;
/** A claim outlasts the send's timeout by this much (building the content reads logs). */
const CLAIM_MARGIN_MS = 20_000;

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
  async deliverDue(): Promise<DeliveryReport> {
    const report: DeliveryReport = { sent: 0, retrying: 0, failed: 0 };
    const jobs = await this.deps.deliveries.listDueJobs(this.deps.now(), PAGE);
    await pLimit(PARALLEL).map(jobs, async (job) => {
      const outcome = await this.deliverJob(job);
      if (outcome) report[outcome]++;
    });
    return report;
  }

  /** One job: claim, send, record. @returns what became of it (undefined: nothing to do). */
  async deliverJob(job: DeliveryJob): Promise<keyof DeliveryReport | undefined> {
    const { deliveries, config } = this.deps;
    const rec = await deliveries.get(job.subject, job.deliveryId);
    const now = this.deps.now();
    if (rec?.status !== "PENDING" || job.dueAt < (rec.nextAttemptAt ?? rec.createdAt)) {
      // Done already, or the job of an earlier attempt (a repeated event wrote it again).
      await deliveries.deleteJob(job);
      return undefined;
    }
    if (rec.claimedUntil !== undefined && rec.claimedUntil > now) return undefined;
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
    const claimed = this.next(rec, {
      attempts: rec.attempts + 1,
      claimedUntil: now + timeoutMs + CLAIM_MARGIN_MS,
    });
    if (!(await deliveries.update(claimed))) return undefined;
    let error: string | undefined;
    let target = describeChannel(channel);
    try {
      // Read at each send, held for this send only: a rotated secret applies to the next one.
      const resolved = await resolveChannel(rec.channel, channel, this.deps.secrets);
      target = describeChannel(resolved.channel);
      const content = await alertContent(this.deps, claimed);
      try {
        await sendAlert(resolved.channel, content, {
          timeoutMs,
          ...(this.deps.publishEmail ? { publishEmail: this.deps.publishEmail } : {}),
          ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
        });
      } catch (e) {
        // A receiver's answer may echo a header value or the URL: masked as task secrets are.
        if (e instanceof SendError) throw new SendError(resolved.masker.mask(e.message));
        throw e;
      }
    } catch (e) {
      error =
        e instanceof SendError ? e.message : `could not build the alert: ${(e as Error).message}`;
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

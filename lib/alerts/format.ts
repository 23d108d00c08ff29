/**
 * What an alert says, and how each channel type carries it: a generic JSON body (webhook), a
 * Slack incoming-webhook payload (`text` plus Block Kit `blocks`; Slack's limits: a section's
 * text ≤ 3,000 characters, ≤ 50 blocks, https://api.slack.com/reference/block-kit/blocks), and a
 * plain-text e-mail (SNS `Subject` ≤ 100 ASCII characters). Pure: the content is gathered by
 * content.ts.
 */
import type { AlertEvent } from "../core/alert-rules.js";

/** Most log lines kept per failed task, and most characters per line. */
export const LOG_TAIL_LINES = 20;
export const LOG_LINE_CHARS = 500;
/** Most characters of log lines in one alert, all tasks together. */
export const LOG_TAIL_TOTAL_CHARS = 8 * 1024;
/** Most failed tasks an alert names (the rest are counted). */
export const MAX_FAILED_TASKS = 10;

/** A failed task as an alert shows it. */
export interface FailedTask {
  code: string;
  attempt: number;
  state: string;
  error?: string;
  /** Its last log lines, oldest first (≤ {@link LOG_TAIL_LINES}). */
  logTail: string[];
}

/** Everything an alert says, whatever the channel. Times are ISO-8601 UTC. */
export interface AlertContent {
  deliveryId: string;
  event: AlertEvent;
  rule: string;
  channel: string;
  workflow: string;
  displayName?: string;
  instanceId?: string;
  state?: string;
  run?: number;
  startTime?: string;
  endTime?: string;
  durationMs?: number;
  /** `<consoleUrl>/instances/<id>`, when a console URL is known. */
  link?: string;
  error?: string;
  /** TASK_RETRY_EXHAUSTED: the task whose last attempt failed. */
  task?: { code: string; attempt: number };
  failedTasks: FailedTask[];
  /** Failed tasks not listed (over {@link MAX_FAILED_TASKS}). */
  moreFailedTasks?: number;
  /** SCHEDULE_MISFIRE. */
  schedule?: { scheduleId: string; nominalTime: string; outcome: string };
}

/** One line saying what happened: "etl-report FAILURE (instance 1234…)". */
export function headline(c: AlertContent): string {
  const name = c.displayName ? `${c.displayName} (${c.workflow})` : c.workflow;
  switch (c.event) {
    case "TASK_RETRY_EXHAUSTED":
      return `${name}: task ${c.task?.code ?? "?"} failed, no retry left (attempt ${c.task?.attempt ?? "?"})`;
    case "SCHEDULE_MISFIRE":
      return `${name}: schedule ${c.schedule?.scheduleId ?? "?"} did not run ${c.schedule?.nominalTime ?? ""} (${c.schedule?.outcome ?? "misfire"})`;
    case "TIMEOUT":
      return `${name}: instance timed out and FAILED`;
    default:
      return `${name}: instance ${c.state ?? c.event}`;
  }
}

/** "1h 2m 3s", "4.2s". */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return [h ? `${h}h` : "", m ? `${m}m` : "", `${s % 60}s`].filter(Boolean).join(" ");
}

/**
 * Cuts log tails to the limits: each line to {@link LOG_LINE_CHARS}, each tail to its last
 * {@link LOG_TAIL_LINES} lines, and all of them to {@link LOG_TAIL_TOTAL_CHARS} (later tasks lose
 * their oldest lines first… then lines altogether).
 */
export function limitTails(tasks: FailedTask[]): FailedTask[] {
  let budget = LOG_TAIL_TOTAL_CHARS;
  return tasks.map((t) => {
    const lines = t.logTail
      .slice(-LOG_TAIL_LINES)
      .map((l) => (l.length > LOG_LINE_CHARS ? `${l.slice(0, LOG_LINE_CHARS)}…` : l));
    const kept: string[] = [];
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i] as string;
      if (line.length + 1 > budget) break;
      budget -= line.length + 1;
      kept.unshift(line);
    }
    return { ...t, logTail: kept };
  });
}

/** The generic webhook body (JSON), `schemaVersion` 1: fields are only ever added. */
export function webhookBody(c: AlertContent): Record<string, unknown> {
  return { schemaVersion: 1, summary: headline(c), ...c };
}

interface SlackBlock {
  type: string;
  [k: string]: unknown;
}

const SLACK_TEXT = 2_900;
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/** Slack mrkdwn escapes: &, < and > (https://api.slack.com/reference/surfaces/formatting). */
const esc = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

const EMOJI: Record<AlertEvent, string> = {
  SUCCESS: ":white_check_mark:",
  FAILURE: ":x:",
  STOPPED: ":octagonal_sign:",
  TIMEOUT: ":hourglass:",
  TASK_RETRY_EXHAUSTED: ":warning:",
  SCHEDULE_MISFIRE: ":calendar:",
};

/** The Slack incoming-webhook payload: `text` (notifications, fallback) and `blocks`. */
export function slackBody(c: AlertContent): { text: string; blocks: SlackBlock[] } {
  const title = `${EMOJI[c.event]} ${headline(c)}`;
  const blocks: SlackBlock[] = [
    { type: "section", text: { type: "mrkdwn", text: clip(`*${esc(title)}*`, SLACK_TEXT) } },
  ];
  const fields: string[] = [];
  if (c.instanceId) {
    const id = c.link ? `<${c.link}|${c.instanceId}>` : c.instanceId;
    fields.push(`*Instance*\n${id}`);
  }
  if (c.state) fields.push(`*State*\n${c.state}${c.run && c.run > 1 ? ` (run ${c.run})` : ""}`);
  if (c.startTime) fields.push(`*Started*\n${c.startTime}`);
  if (c.endTime) fields.push(`*Ended*\n${c.endTime}`);
  if (c.durationMs !== undefined) fields.push(`*Duration*\n${formatDuration(c.durationMs)}`);
  if (fields.length > 0) {
    blocks.push({ type: "section", fields: fields.map((text) => ({ type: "mrkdwn", text })) });
  }
  if (c.error) {
    blocks.push({
      type: "section",
      text: { type: "mrkdwn", text: clip(`*Error:* ${esc(c.error)}`, SLACK_TEXT) },
    });
  }
  for (const t of c.failedTasks) {
    const head = `*${esc(t.code)}* ${t.state} (attempt ${t.attempt})${t.error ? `: ${esc(t.error)}` : ""}`;
    // A code block: backticks inside the log would end it early.
    const log = t.logTail.length
      ? `\n\`\`\`${esc(t.logTail.join("\n")).replaceAll("```", "'''")}\`\`\``
      : "";
    blocks.push({ type: "section", text: { type: "mrkdwn", text: clip(head + log, SLACK_TEXT) } });
  }
  if (c.moreFailedTasks) {
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: `and ${c.moreFailedTasks} more failed tasks` }],
    });
  }
  if (c.link) {
    blocks.push({
      type: "actions",
      elements: [
        { type: "button", text: { type: "plain_text", text: "Open in console" }, url: c.link },
      ],
    });
  }
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: `Shoal alert ${esc(c.deliveryId)} · ${esc(c.rule)}` }],
  });
  return { text: clip(title, SLACK_TEXT), blocks: blocks.slice(0, 50) };
}

/** An e-mail (SNS Publish): a subject of ≤ 100 printable ASCII characters, and plain text. */
export function emailBody(c: AlertContent): { subject: string; message: string } {
  const ascii = `[Shoal] ${headline(c)}`.replace(/[^\x20-\x7e]/g, "?").replace(/\s+/g, " ");
  const subject = ascii.length > 100 ? `${ascii.slice(0, 97)}...` : ascii;
  const lines = [headline(c), ""];
  const field = (k: string, v: unknown) => v !== undefined && lines.push(`${k}: ${String(v)}`);
  field("Instance", c.instanceId);
  field("State", c.state);
  field("Started", c.startTime);
  field("Ended", c.endTime);
  if (c.durationMs !== undefined) field("Duration", formatDuration(c.durationMs));
  field("Link", c.link);
  field("Error", c.error);
  for (const t of c.failedTasks) {
    lines.push(
      "",
      `Task ${t.code} ${t.state} (attempt ${t.attempt})${t.error ? `: ${t.error}` : ""}`,
    );
    for (const l of t.logTail) lines.push(`  | ${l}`);
  }
  if (c.moreFailedTasks) lines.push("", `and ${c.moreFailedTasks} more failed tasks`);
  lines.push("", `Delivery ${c.deliveryId} (${c.rule})`);
  return { subject, message: lines.join("\n") };
}

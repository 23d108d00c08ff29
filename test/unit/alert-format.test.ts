// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
import { describe, expect, it } from "vitest";
import {
  AlertsConfigError,
  describeChannel,
  parseAlertsConfig,
} from "../../lib/alerts/channels.js";
import { backoffMs } from "../../lib/alerts/deliverer.js";
import {
  type AlertContent,
  emailBody,
  formatDuration,
  LOG_TAIL_LINES,
  LOG_TAIL_TOTAL_CHARS,
  limitTails,
  slackBody,
  webhookBody,
} from "../../lib/alerts/format.js";

const content: AlertContent = {
  deliveryId: "i-1.1.FAILURE.w0.ops",
  event: "FAILURE",
  rule: "workflow.alerts[0]",
  channel: "ops",
  workflow: "etl",
  displayName: "每日 ETL",
  instanceId: "i-1",
  state: "FAILURE",
  run: 1,
  startTime: "2026-01-01T00:00:00.000Z",
  endTime: "2026-01-01T00:01:05.000Z",
  durationMs: 65_000,
  link: "http://localhost:8080/instances/i-1",
  failedTasks: [
    { code: "load", attempt: 2, state: "FAILURE", error: "exit code 3", logTail: ["a <b>", "c"] },
  ],
};

describe("alert payloads", () => {
  it("webhook: the content as JSON with a summary", () => {
    const body = webhookBody(content);
    expect(body).toMatchObject({
      schemaVersion: 1,
      summary: "每日 ETL (etl): instance FAILURE",
      deliveryId: content.deliveryId,
      link: content.link,
      failedTasks: [{ code: "load", logTail: ["a <b>", "c"] }],
    });
  });

  it("slack: text plus blocks, the link as a button, mrkdwn escaped", () => {
    const body = slackBody(content);
    expect(body.text).toBe(":x: 每日 ETL (etl): instance FAILURE");
    const json = JSON.stringify(body.blocks);
    expect(json).toContain("<http://localhost:8080/instances/i-1|i-1>");
    expect(json).toContain("a &lt;b&gt;\\nc");
    expect(json).toContain('"url":"http://localhost:8080/instances/i-1"');
    expect(json).toContain("*Duration*\\n1m 5s");
    for (const b of body.blocks) {
      const text = (b.text as { text?: string } | undefined)?.text ?? "";
      expect(text.length).toBeLessThanOrEqual(3000);
    }
  });

  it("slack: no link, no button", () => {
    const { link: _l, ...rest } = content;
    expect(JSON.stringify(slackBody(rest).blocks)).not.toContain('"actions"');
  });

  it("email: an ASCII subject of at most 100 characters", () => {
    const e = emailBody({ ...content, workflow: "x".repeat(200) });
    expect(e.subject.length).toBeLessThanOrEqual(100);
    expect(e.subject).toMatch(/^\[Shoal\] [\x20-\x7e]+$/);
    expect(e.message).toContain("  | a <b>");
  });

  it("keeps log tails within their limits", () => {
    const long = Array.from({ length: 100 }, (_, i) => `line ${i} ${"x".repeat(300)}`);
    const tails = limitTails(
      Array.from({ length: 5 }, (_, i) => ({
        code: `t${i}`,
        attempt: 1,
        state: "FAILURE",
        logTail: long,
      })),
    );
    expect(tails[0]?.logTail).toHaveLength(LOG_TAIL_LINES);
    expect(tails[0]?.logTail.at(-1)).toMatch(/^line 99 /);
    const total = tails.flatMap((t) => t.logTail).join("\n").length;
    expect(total).toBeLessThanOrEqual(LOG_TAIL_TOTAL_CHARS);
  });

  it("formats durations", () => {
    expect(formatDuration(4_200)).toBe("4.2s");
    expect(formatDuration(3_723_000)).toBe("1h 2m 3s");
  });
});

describe("alert channels", () => {
  it("parses YAML with defaults", () => {
    const c = parseAlertsConfig(
      "channels:\n  ops: { type: slack, url: 'https://hooks.slack.com/services/T/B/secret' }\n",
      "alerts.yaml",
    );
    expect(c.delivery).toEqual({
      attempts: 5,
      backoffSeconds: [30, 60, 120, 300],
      timeoutSeconds: 10,
    });
    expect(describeChannel(c.channels.ops as never)).toBe("slack (hooks.slack.com)");
    expect(backoffMs(c, 1)).toBe(30_000);
    expect(backoffMs(c, 9)).toBe(300_000);
  });

  it("names the field and the rule of a bad file, never its URLs", () => {
    const bad = (text: string) => {
      try {
        parseAlertsConfig(text, "alerts.yaml");
      } catch (e) {
        expect(e).toBeInstanceOf(AlertsConfigError);
        return (e as Error).message;
      }
      throw new Error("accepted");
    };
    expect(bad("channels:\n  ops: { type: pager, url: 'https://x/secret' }\n")).toMatch(
      /^alerts.yaml: channels.ops(.type)?: /,
    );
    expect(bad("channels:\n  ops: { type: slack, url: 'ftp://x/secret' }\n")).toBe(
      "alerts.yaml: channels.ops.url: must be an http:// or https:// URL, or ${secret:NAME}",
    );
    expect(bad("delivery: { timeoutSeconds: 60 }")).toMatch(/delivery.timeoutSeconds/);
    expect(bad("channels: [")).toMatch(/^alerts.yaml: not YAML or JSON/);
  });

  it("a YAML syntax error says the line and column, never the file's text", () => {
    const text =
      "channels:\n  ops: { type: slack, url: 'https://hooks.example/T/B/literal-url-xyz }\n";
    let message = "";
    try {
      parseAlertsConfig(text, "alerts.yaml");
    } catch (e) {
      expect(e).toBeInstanceOf(AlertsConfigError);
      message = (e as Error).message;
    }
    expect(message).toMatch(/^alerts.yaml: not YAML or JSON \(line \d+, column \d+\)$/);
    expect(message).not.toContain("literal-url-xyz");
    expect(message).not.toContain("hooks.example");
  });
});

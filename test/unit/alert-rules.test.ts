import { describe, expect, it } from "vitest";
import { alertChannelsSetting, configFromEnv } from "../../lib/aws/config.js";
import {
  alertRulesSchema,
  deliveryId,
  instanceEndEvents,
  matchRules,
  taskEndEvents,
  unconfiguredChannels,
} from "../../lib/core/alert-rules.js";
import { RequestError } from "../../lib/core/errors.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

const task = { code: "a", type: "SHELL", command: "true" };

describe("alert rules: validation", () => {
  it("accepts rules in a workflow definition", () => {
    const def = parseWorkflowDefinition({
      tasks: [task],
      alerts: [{ on: ["FAILURE", "TIMEOUT"], channels: ["ops-slack"] }],
    });
    expect(def.alerts).toEqual([{ on: ["FAILURE", "TIMEOUT"], channels: ["ops-slack"] }]);
  });

  it("names the field and the rule of a bad rule", () => {
    const bad = (alerts: unknown) => {
      try {
        parseWorkflowDefinition({ tasks: [task], alerts });
      } catch (e) {
        return (e as RequestError).details?.map((d) => `${d.path}: ${d.message}`);
      }
      throw new Error("accepted");
    };
    expect(bad([{ on: ["FAILED"], channels: ["x"] }])).toEqual([
      "alerts[0].on[0]: must be one of SUCCESS, FAILURE, STOPPED, TIMEOUT, TASK_RETRY_EXHAUSTED, SCHEDULE_MISFIRE",
    ]);
    expect(bad([{ on: [], channels: ["x"] }])).toEqual([
      "alerts[0].on: must list at least one event",
    ]);
    expect(bad([{ on: ["SUCCESS"], channels: ["no spaces"] }])?.[0]).toMatch(
      /^alerts\[0\]\.channels\[0\]: must match/,
    );
    expect(bad([{ on: ["SUCCESS", "SUCCESS"], channels: ["x"] }])).toEqual([
      "alerts[0].on: must not list the same event twice",
    ]);
    expect(bad([{ on: ["SUCCESS"], channels: ["x"], url: "http://x" }])?.[0]).toMatch(
      /^alerts\[0\]\.url: /,
    );
    expect(bad([{ on: ["SUCCESS"] }])).toEqual(["alerts[0].channels: is required"]);
  });

  it("keeps the rules few", () => {
    const many = Array.from({ length: 21 }, () => ({ on: ["SUCCESS"], channels: ["x"] }));
    expect(alertRulesSchema.safeParse(many).success).toBe(false);
    expect(RequestError).toBeDefined();
  });
});

describe("alert rules: channels the deployment does not configure", () => {
  const rules = [
    { on: ["FAILURE" as const], channels: ["ops-slak", "oncall"] },
    { on: ["SUCCESS" as const], channels: ["ops-slack"] },
  ];

  it("warns at each unknown channel, naming the rule, the channel, the closest and where channels live", () => {
    const warnings = unconfiguredChannels(rules, ["oncall", "ops-slack"]);
    expect(warnings).toEqual([
      {
        path: "alerts[0].channels[0]",
        message:
          "alert rule alerts[0] names channel 'ops-slak', which this Shoal does not configure (its channels: oncall, ops-slack; did you mean 'ops-slack'?): its alerts to it would fail at delivery. Channels are configured in standalone's --alerts FILE (or SHOAL_ALERTS), or the Shoal construct's alerts prop on AWS (docs/alerts.md)",
      },
    ]);
  });

  it("warns at every channel when the deployment has none, and at none when all are there", () => {
    const none = unconfiguredChannels(rules, [], "the Shoal at http://localhost:8080");
    expect(none.map((w) => w.path)).toEqual([
      "alerts[0].channels[0]",
      "alerts[0].channels[1]",
      "alerts[1].channels[0]",
    ]);
    expect(none[1]?.message).toMatch(
      /^alert rule alerts\[0\] names channel 'oncall', which the Shoal at http:\/\/localhost:8080 does not configure \(it has none\)/,
    );
    expect(unconfiguredChannels(rules, ["ops-slak", "oncall", "ops-slack"])).toEqual([]);
    expect(unconfiguredChannels(undefined, [])).toEqual([]);
  });

  it("lists at most ten configured channels", () => {
    const many = Array.from({ length: 12 }, (_, i) => `c${String(i).padStart(2, "0")}`);
    const [w] = unconfiguredChannels([{ on: ["FAILURE"], channels: ["zzz"] }], many);
    expect(w?.message).toContain(
      "(its channels: c00, c01, c02, c03, c04, c05, c06, c07, c08, c09, …)",
    );
  });
});

describe("SHOAL_ALERT_CHANNELS (the construct tells the API function its channels)", () => {
  it("is a JSON object of name to type; unset is not known; anything else names the variable", () => {
    expect(alertChannelsSetting('{"ops":"slack","oncall":"email"}')).toEqual({
      ops: "slack",
      oncall: "email",
    });
    expect(alertChannelsSetting("{}")).toEqual({});
    expect(alertChannelsSetting(undefined)).toBeUndefined();
    expect(configFromEnv({}).alertChannels).toBeUndefined();
    expect(configFromEnv({ SHOAL_ALERT_CHANNELS: '{"a":"webhook"}' }).alertChannels).toEqual({
      a: "webhook",
    });
    for (const bad of ["ops", "[]", '{"ops":1}', "null"]) {
      expect(() => alertChannelsSetting(bad)).toThrow(
        'SHOAL_ALERT_CHANNELS must be a JSON object of channel name to type, e.g. {"ops":"slack"}',
      );
    }
  });
});

describe("alert rules: what an event is", () => {
  it("maps instance ends as DolphinScheduler's warningType does", () => {
    const end = (state: "SUCCESS" | "FAILURE" | "STOPPED" | "RUNNING", timedOut = false) =>
      instanceEndEvents({ state, timedOut, subWorkflow: false });
    expect(end("SUCCESS")).toEqual(["SUCCESS"]);
    expect(end("FAILURE")).toEqual(["FAILURE"]);
    expect(end("FAILURE", true)).toEqual(["TIMEOUT", "FAILURE"]);
    expect(end("STOPPED")).toEqual(["STOPPED"]);
    expect(end("RUNNING")).toEqual([]);
    // Sub-workflow instances are alerted through their parent (AlertManager.isNeedToSendWarning).
    expect(instanceEndEvents({ state: "FAILURE", timedOut: false, subWorkflow: true })).toEqual([]);
  });

  it("counts a failed attempt only when no retry follows", () => {
    expect(taskEndEvents({ state: "FAILURE" })).toEqual(["TASK_RETRY_EXHAUSTED"]);
    expect(taskEndEvents({ state: "FAILURE", willRetry: true })).toEqual([]);
    expect(taskEndEvents({ state: "KILLED" })).toEqual([]);
    expect(taskEndEvents({ state: "SUCCESS" })).toEqual([]);
  });
});

describe("alert rules: matching", () => {
  it("gives one alert per rule × channel, the most specific event of each rule", () => {
    const rules = [
      { on: ["FAILURE" as const, "TIMEOUT" as const], channels: ["a", "b"] },
      { on: ["FAILURE" as const], channels: ["c"] },
      { on: ["SUCCESS" as const], channels: ["d"] },
    ];
    expect(matchRules("workflow", rules, ["TIMEOUT", "FAILURE"])).toEqual([
      { rule: "workflow.alerts[0]", channel: "a", event: "TIMEOUT" },
      { rule: "workflow.alerts[0]", channel: "b", event: "TIMEOUT" },
      { rule: "workflow.alerts[1]", channel: "c", event: "FAILURE" },
    ]);
    expect(matchRules("workflow", rules, ["SUCCESS"])).toEqual([
      { rule: "workflow.alerts[2]", channel: "d", event: "SUCCESS" },
    ]);
    expect(matchRules("workflow", undefined, ["SUCCESS"])).toEqual([]);
  });

  it("sends a channel named by the workflow and the schedule once", () => {
    const seen = new Set<string>();
    const w = matchRules("workflow", [{ on: ["FAILURE"], channels: ["ops"] }], ["FAILURE"], seen);
    const s = matchRules(
      "schedule",
      [{ on: ["FAILURE"], channels: ["ops", "mgr"] }],
      ["FAILURE"],
      seen,
    );
    expect([...w, ...s].map((m) => `${m.rule}:${m.channel}`)).toEqual([
      "workflow.alerts[0]:ops",
      "schedule.alerts[0]:mgr",
    ]);
  });

  it("makes delivery ids stable and distinct", () => {
    const m = { rule: "schedule.alerts[1]", channel: "ops", event: "FAILURE" as const };
    expect(deliveryId("i-1.2", m)).toBe("i-1.2.FAILURE.s1.ops");
    expect(deliveryId("i-1.2", m)).toBe(deliveryId("i-1.2", { ...m }));
    expect(deliveryId("i-1.3", m)).not.toBe(deliveryId("i-1.2", m));
  });
});

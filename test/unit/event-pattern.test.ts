import { describe, expect, it } from "vitest";
import {
  checkEventPattern,
  EVENT_PATTERN_MAX_CHARS,
  EVENT_PATTERN_MAX_DEPTH,
  matchesEventPattern,
  putEventsEntryToEvent,
} from "../../lib/core/event-pattern.js";

/** Asserts `pattern` is valid, matches every event in `yes` and none in `no`. */
function expectMatches(pattern: object, yes: object[], no: object[] = []): void {
  expect(checkEventPattern(pattern)).toBeUndefined();
  for (const event of yes) {
    expect(matchesEventPattern(pattern, event), `should match ${JSON.stringify(event)}`).toBe(true);
  }
  for (const event of no) {
    expect(matchesEventPattern(pattern, event), `should not match ${JSON.stringify(event)}`).toBe(
      false,
    );
  }
}

/** Asserts `pattern` is refused with a message matching `message`. */
function expectInvalid(pattern: unknown, message: RegExp): void {
  const problem = checkEventPattern(pattern);
  expect(problem, JSON.stringify(pattern)).toMatch(message);
}

/** User Guide, "Amazon EventBridge event patterns". */
const EC2_EVENT = {
  version: "0",
  id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
  "detail-type": "EC2 Instance State-change Notification",
  source: "aws.ec2",
  account: "111122223333",
  time: "2017-12-22T18:43:48Z",
  region: "us-west-1",
  resources: ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"],
  detail: { "instance-id": "i-1234567890abcdef0", state: "terminated" },
};

/** The sample event of aws/event-ruler's README, which the User Guide's examples are cut from. */
const RULER_EVENT = {
  version: "0",
  id: "ddddd4-aaaa-7777-4444-345dd43cc333",
  "detail-type": "EC2 Instance State-change Notification",
  source: "aws.ec2",
  account: "012345679012",
  time: "2017-10-02T16:24:49Z",
  region: "us-east-1",
  resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000"],
  detail: {
    "c-count": 5,
    "d-count": 3,
    "x-limit": 301.8,
    "source-ip": "10.0.0.33",
    "instance-id": "i-000000aaaaaa00000",
    state: "running",
  },
};

/** RULER_EVENT with `detail` fields replaced or (when undefined) removed. */
function rulerWith(detail: Record<string, unknown>): object {
  const merged: Record<string, unknown> = { ...RULER_EVENT.detail, ...detail };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  return { ...RULER_EVENT, detail: merged };
}

const d = (detail: Record<string, unknown>) => ({ detail });

describe("User Guide: event patterns", () => {
  it("matches the EC2 instance-termination example", () => {
    expectMatches(
      {
        source: ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
        detail: { state: ["terminated"] },
      },
      [EC2_EVENT],
      [
        { ...EC2_EVENT, detail: { ...EC2_EVENT.detail, state: "running" } },
        { ...EC2_EVENT, source: "aws.fargate" },
        { ...EC2_EVENT, detail: { "instance-id": "i-1" } },
      ],
    );
  });

  it("ORs the values of a field (aws.ec2 or aws.fargate)", () => {
    expectMatches(
      { source: ["aws.ec2", "aws.fargate"] },
      [EC2_EVENT, { source: "aws.fargate" }],
      [{ source: "aws.s3" }, { source: "AWS.EC2" }, {}],
    );
  });

  it("matches null and empty strings, which are not interchangeable", () => {
    const event = {
      version: "0",
      id: "3e3c153a-8339-4e30-8c35-687ebef853fe",
      "detail-type": "EC2 Instance Launch Successful",
      source: "aws.autoscaling",
      account: "123456789012",
      time: "2015-11-11T21:31:47Z",
      region: "us-east-1",
      resources: [],
      detail: { eventVersion: "", responseElements: null },
    };
    expectMatches(
      {
        source: ["aws.autoscaling"],
        "detail-type": ["EC2 Instance Launch Successful"],
        detail: { responseElements: [null] },
      },
      [event],
    );
    expectMatches({ detail: { eventVersion: [""] } }, [event]);
    expect(matchesEventPattern({ detail: { eventVersion: [null] } }, event)).toBe(false);
    expect(matchesEventPattern({ detail: { responseElements: [""] } }, event)).toBe(false);
  });

  it("matches nested values (the Macie risk-score example)", () => {
    const macie = {
      source: "aws.macie",
      "detail-type": "Macie Alert",
      detail: {
        "notification-type": "ALERT_CREATED",
        tags: ["Custom_Alert", "Insider"],
        "risk-score": 80,
        trigger: { "alert-type": "basic", risk: 8 },
      },
    };
    expectMatches(
      {
        source: ["aws.macie"],
        "detail-type": ["Macie Alert"],
        detail: { "risk-score": [80], trigger: { risk: [8] } },
      },
      [macie],
      [
        { ...macie, detail: { ...macie.detail, "risk-score": 81 } },
        { ...macie, detail: { ...macie.detail, "risk-score": "80" } },
        { ...macie, detail: { ...macie.detail, trigger: { risk: 9 } } },
        { ...macie, detail: { ...macie.detail, trigger: 8 } },
      ],
    );
  });

  it("matches an event array when it shares any value with the pattern array", () => {
    expectMatches(
      {
        resources: [
          "arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f",
          "arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f",
          "arn:aws:ec2:us-east-1:444455556666:instance/i-b188560f",
        ],
      },
      [
        {
          resources: [
            "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:eb56d16b-bbf0-401d-b893-d5978ed4a025:autoScalingGroupName/ASGTerminate",
            "arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f",
          ],
        },
      ],
      [
        { resources: ["arn:aws:ec2:us-east-1:999999999999:instance/i-b188560f"] },
        { resources: [] },
      ],
    );
  });

  it("uses the last of a key given twice", () => {
    const pattern = JSON.parse(
      '{"detail":{"location":[{"prefix":"us-"}],"location":[{"anything-but":"us-east"}]}}',
    );
    expectMatches(pattern, [d({ location: "eu-west" })], [d({ location: "us-east" })]);
  });
});

describe("User Guide: content filtering", () => {
  it("prefix", () => {
    expectMatches(
      { time: [{ prefix: "2017-10-02" }] },
      [{ time: "2017-10-02T18:43:48Z" }, RULER_EVENT],
      [{ time: "2017-10-03T00:00:00Z" }, EC2_EVENT, { time: 20171002 }, {}],
    );
  });

  it("prefix ignoring case", () => {
    expectMatches(
      { detail: { service: [{ prefix: { "equals-ignore-case": "EventB" } }] } },
      [d({ service: "EventBridge" }), d({ service: "EVENTBRIDGE" }), d({ service: "eventb" })],
      [d({ service: "Event-Bridge" }), d({ service: "AnEventB" })],
    );
  });

  it("suffix, and suffix ignoring case", () => {
    expectMatches(
      { FileName: [{ suffix: ".png" }] },
      [{ FileName: "image.png" }],
      [{ FileName: "image.PNG" }, { FileName: "image.png.txt" }],
    );
    expectMatches(
      { detail: { FileName: [{ suffix: { "equals-ignore-case": ".png" } }] } },
      [d({ FileName: "image.png" }), d({ FileName: "IMAGE.PNG" })],
      [d({ FileName: "image.gif" })],
    );
  });

  it("anything-but a string or a number: any present value of another type or value", () => {
    expectMatches(
      { detail: { state: [{ "anything-but": "initializing" }] } },
      [RULER_EVENT, d({ state: 5 }), d({ state: null }), d({ state: ["initializing", "x"] })],
      [d({ state: "initializing" }), d({ other: 1 }), d({ state: [] })],
    );
    expectMatches(
      { detail: { "x-limit": [{ "anything-but": 123 }] } },
      [RULER_EVENT, d({ "x-limit": "123" }), d({ "x-limit": 123.5 })],
      [d({ "x-limit": 123 }), d({ "x-limit": 123.0 }), d({})],
    );
  });

  it("anything-but a list of strings or of numbers", () => {
    expectMatches(
      { detail: { state: [{ "anything-but": ["stopped", "overloaded"] }] } },
      [RULER_EVENT, d({ state: "Stopped" })],
      [d({ state: "stopped" }), d({ state: "overloaded" })],
    );
    expectMatches(
      { detail: { "x-limit": [{ "anything-but": [100, 200, 300] }] } },
      [RULER_EVENT, d({ "x-limit": 250 })],
      [d({ "x-limit": 100 }), d({ "x-limit": 300 })],
    );
  });

  it("anything-but with prefix, suffix, equals-ignore-case and wildcard", () => {
    expectMatches(
      { detail: { state: [{ "anything-but": { prefix: "init" } }] } },
      [RULER_EVENT, d({ state: 7 })],
      [d({ state: "initializing" }), d({ state: "init" })],
    );
    expectMatches(
      { Region: [{ "anything-but": { prefix: "us-" } }] },
      [{ Region: "eu-west-1" }],
      [{ Region: "us-east-1" }],
    );
    expectMatches(
      { detail: { FileName: [{ "anything-but": { suffix: ".txt" } }] } },
      [d({ FileName: "a.png" })],
      [d({ FileName: "a.txt" })],
    );
    expectMatches(
      {
        detail: {
          state: [{ "anything-but": { "equals-ignore-case": ["Stopped", "OverLoaded"] } }],
        },
      },
      [d({ state: "running" })],
      [d({ state: "STOPPED" }), d({ state: "overloaded" })],
    );
    expectMatches(
      { FilePath: [{ "anything-but": { wildcard: "*/lib/*" } }] },
      [{ FilePath: "/usr/bin/env" }],
      [{ FilePath: "/usr/lib/libc.so" }],
    );
    expectMatches(
      { FilePath: [{ "anything-but": { wildcard: ["*/lib/*", "*/bin/*"] } }] },
      [{ FilePath: "/etc/hosts" }],
      [{ FilePath: "/usr/lib/libc.so" }, { FilePath: "/usr/bin/env" }],
    );
  });

  it("numeric, true for all fields", () => {
    const pattern = {
      detail: {
        "c-count": [{ numeric: [">", 0, "<=", 5] }],
        "d-count": [{ numeric: ["<", 10] }],
        "x-limit": [{ numeric: ["=", 3.018e2] }],
      },
    };
    expectMatches(
      pattern,
      [RULER_EVENT, rulerWith({ "c-count": 0.000001, "d-count": -4e9 })],
      [
        rulerWith({ "c-count": 0 }),
        rulerWith({ "c-count": 6 }),
        rulerWith({ "d-count": 10 }),
        rulerWith({ "x-limit": "301.8" }),
        rulerWith({ "x-limit": undefined }),
      ],
    );
  });

  it("IP address matching", () => {
    expectMatches(
      { detail: { sourceIPAddress: [{ cidr: "10.0.0.0/24" }] } },
      [d({ sourceIPAddress: "10.0.0.0" }), d({ sourceIPAddress: "10.0.0.255" })],
      [d({ sourceIPAddress: "10.0.1.0" }), d({ sourceIPAddress: "9.255.255.255" })],
    );
  });

  it("exists: true (the pending-instance example)", () => {
    expectMatches(
      { detail: { state: [{ exists: true }] } },
      [
        {
          version: "0",
          id: "7bf73129-1428-4cd3-a780-95db273d1602",
          "detail-type": "EC2 Instance State-change Notification",
          source: "aws.ec2",
          account: "123456789012",
          time: "2015-11-11T21:29:54Z",
          region: "us-east-1",
          resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111"],
          detail: { "instance-id": "i-abcd1111", state: "pending" },
        },
      ],
      [
        {
          "detail-type": ["EC2 Instance State-change Notification"],
          resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-02ebd4584a2ebd341"],
          detail: { "c-count": { c1: 100 } },
        },
      ],
    );
  });

  it("exists: false, which an intermediate node does not contradict", () => {
    const base = {
      "detail-type": ["EC2 Instance State-change Notification"],
      resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-02ebd4584a2ebd341"],
    };
    expectMatches(
      { detail: { "c-count": [{ exists: false }] } },
      [
        { ...base, detail: { state: ["initializing", "running"] } },
        { ...base, detail: { state: ["initializing", "running"], "c-count": { c1: 100 } } },
      ],
      [RULER_EVENT],
    );
  });

  it("the complex example, with cidr as in event-ruler's README", () => {
    const pattern = {
      time: [{ prefix: "2017-10-02" }],
      detail: {
        state: [{ "anything-but": "initializing" }],
        "c-count": [{ numeric: [">", 0, "<=", 5] }],
        "d-count": [{ numeric: ["<", 10] }],
        "x-limit": [{ "anything-but": [100, 200, 300] }],
        "source-ip": [{ cidr: "10.0.0.0/8" }],
      },
    };
    expectMatches(
      pattern,
      [RULER_EVENT],
      [
        rulerWith({ state: "initializing" }),
        rulerWith({ "x-limit": 200 }),
        rulerWith({ "source-ip": "11.0.0.1" }),
        { ...RULER_EVENT, time: "2017-10-03T00:00:00Z" },
      ],
    );
  });
});

describe("User Guide: comparison operators table", () => {
  it("and, or, not, null, empty, equals", () => {
    expectMatches(
      { Location: ["New York"], Day: ["Monday"] },
      [{ Location: "New York", Day: "Monday" }],
      [{ Location: "New York", Day: "Tuesday" }, { Location: "New York" }],
    );
    expectMatches(
      { PaymentType: ["Credit", "Debit"] },
      [{ PaymentType: "Credit" }, { PaymentType: "Debit" }],
      [{ PaymentType: "Cash" }],
    );
    expectMatches(
      { Weather: [{ "anything-but": ["Raining"] }] },
      [{ Weather: "Sunny" }],
      [{ Weather: "Raining" }],
    );
    expectMatches({ UserID: [null] }, [{ UserID: null }], [{}, { UserID: "null" }, { UserID: "" }]);
    expectMatches({ LastName: [""] }, [{ LastName: "" }], [{ LastName: null }, {}]);
    expectMatches({ Name: ["Alice"] }, [{ Name: "Alice" }], [{ Name: "alice" }]);
  });

  it("numeric equals and a range, at its bounds", () => {
    expectMatches({ Price: [{ numeric: ["=", 100] }] }, [{ Price: 100 }], [{ Price: "100" }]);
    expectMatches(
      { Price: [{ numeric: [">", 10, "<=", 20] }] },
      [{ Price: 10.000001 }, { Price: 20 }, { Price: 15 }],
      [{ Price: 10 }, { Price: 20.000001 }, { Price: 9 }, { Price: "15" }],
    );
  });

  it("exists, does not exist", () => {
    expectMatches(
      { ProductName: [{ exists: true }] },
      [{ ProductName: "x" }, { ProductName: null }, { ProductName: [1] }],
      [{}, { ProductName: [] }, { ProductName: { a: 1 } }],
    );
    expectMatches(
      { ProductName: [{ exists: false }] },
      [{}, { ProductName: [] }, { ProductName: { a: 1 } }],
      [{ ProductName: "x" }, { ProductName: null }],
    );
  });

  it("begins with, ends with, equals ignoring case", () => {
    expectMatches({ Region: [{ prefix: "us-" }] }, [{ Region: "us-east-1" }], [{ Region: "eu-1" }]);
    expectMatches(
      { service: [{ prefix: { "equals-ignore-case": "eventb" } }] },
      [{ service: "EventBridge" }],
      [{ service: "SNS" }],
    );
    expectMatches(
      { service: [{ suffix: { "equals-ignore-case": "tBridge" } }] },
      [{ service: "EVENTBRIDGE" }, { service: "eventbridge" }],
      [{ service: "bridges" }],
    );
    expectMatches(
      { Name: [{ "equals-ignore-case": "alice" }] },
      [{ Name: "Alice" }, { Name: "ALICE" }],
      [{ Name: "Alicia" }, { Name: 1 }],
    );
  });

  it("wildcard: a .png file in the folder dir", () => {
    expectMatches(
      { FileName: [{ wildcard: "dir/*.png" }] },
      [{ FileName: "dir/a.png" }, { FileName: "dir/.png" }, { FileName: "dir/sub/a.png" }],
      [{ FileName: "other/a.png" }, { FileName: "dir/a.gif" }],
    );
  });
});

describe("event-ruler README examples", () => {
  it("simple matching, suffix, equals-ignore-case, wildcard", () => {
    expectMatches(
      {
        "detail-type": ["EC2 Instance State-change Notification"],
        resources: ["arn:aws:ec2:us-east-1:123456789012:instance/i-000000aaaaaa00000"],
        detail: { state: ["initializing", "running"] },
      },
      [RULER_EVENT, rulerWith({ state: "initializing" })],
      [rulerWith({ state: "stopped" })],
    );
    expectMatches({ source: [{ suffix: "ec2" }] }, [RULER_EVENT], [{ source: "aws.ec3" }]);
    expectMatches({ source: [{ "equals-ignore-case": "AWS.EC2" }] }, [RULER_EVENT]);
    expectMatches(
      { source: [{ wildcard: "Simple*Service" }] },
      [{ source: "SimpleQueueService" }, { source: "SimpleService" }],
      [{ source: "SimpleQueue" }, { source: "NotSimpleService" }],
    );
  });

  it("$or: source AND (metricName OR namespace)", () => {
    expectMatches(
      {
        source: ["aws.cloudwatch"],
        $or: [
          { metricName: ["CPUUtilization", "ReadLatency"] },
          { namespace: ["AWS/EC2", "AWS/ES"] },
        ],
      },
      [
        { source: "aws.cloudwatch", metricName: "ReadLatency" },
        { source: "aws.cloudwatch", namespace: "AWS/ES" },
      ],
      [
        { source: "aws.cloudwatch", metricName: "Other", namespace: "AWS/S3" },
        { source: "aws.ec2", metricName: "ReadLatency" },
      ],
    );
  });

  it("$or in parallel at two levels", () => {
    expectMatches(
      {
        $or: [{ metricName: ["CPUUtilization"] }, { namespace: ["AWS/EC2"] }],
        detail: {
          $or: [
            { source: ["aws.cloudwatch"] },
            { "detail-type": ["CloudWatch Alarm State Change"] },
          ],
        },
      },
      [
        { metricName: "CPUUtilization", detail: { source: "aws.cloudwatch" } },
        { namespace: "AWS/EC2", detail: { "detail-type": "CloudWatch Alarm State Change" } },
      ],
      [{ metricName: "CPUUtilization", detail: { source: "aws.ec2" } }],
    );
  });

  it("$or with an AND inside, and nested $or", () => {
    const pattern = {
      source: ["aws.cloudwatch"],
      $or: [
        { metricName: ["CPUUtilization", "ReadLatency"] },
        {
          metricType: ["MetricType"],
          namespace: ["AWS/EC2", "AWS/ES"],
          $or: [{ metricId: [1234] }, { spaceId: [1000] }],
        },
        { scope: ["Service"] },
      ],
    };
    const cw = { source: "aws.cloudwatch" };
    expectMatches(
      pattern,
      [
        { ...cw, scope: "Service" },
        { ...cw, metricType: "MetricType", namespace: "AWS/ES", spaceId: 1000 },
      ],
      [
        { ...cw, metricType: "MetricType", namespace: "AWS/ES" },
        { ...cw, metricType: "MetricType", spaceId: 1000 },
      ],
    );
  });

  it("$or of numeric conditions under detail (User Guide)", () => {
    expectMatches(
      {
        detail: {
          $or: [
            { "c-count": [{ numeric: [">", 0, "<=", 5] }] },
            { "d-count": [{ numeric: ["<", 10] }] },
            { "x-limit": [{ numeric: ["=", 3.018e2] }] },
          ],
        },
      },
      [d({ "c-count": 3 }), d({ "d-count": 9 }), d({ "x-limit": 301.8 })],
      [d({ "c-count": 6, "d-count": 10, "x-limit": 300 })],
    );
  });

  it("reads $or that is not an array of 2+ plain objects as a field name", () => {
    expectMatches(
      { source: ["aws.cloudwatch"], $or: { metricType: ["MetricType"] } },
      [{ source: "aws.cloudwatch", $or: { metricType: "MetricType" } }],
      [{ source: "aws.cloudwatch", metricType: "MetricType" }],
    );
    expectInvalid({ $or: [{ numeric: 123 }, { prefix: "abc" }] }, /operator name.*\$or/);
    expectInvalid({ $or: [{ a: [1] }] }, /at least 2/);
  });

  it("array consistency: fields matched inside array elements come from one element", () => {
    const employees = {
      employees: [
        { firstName: "John", lastName: "Doe" },
        { firstName: "Anna", lastName: "Smith" },
        { firstName: "Peter", lastName: "Jones" },
      ],
    };
    const nested = {
      employees: [
        [
          { firstName: "John", lastName: "Doe" },
          { firstName: "Anna", lastName: "Smith" },
        ],
        [{ firstName: "Peter", lastName: "Jones" }],
      ],
    };
    expectMatches({ employees: { firstName: ["Anna"] } }, [employees, nested]);
    expectMatches(
      { employees: { firstName: ["Anna"], lastName: ["Smith"] } },
      [employees, nested],
      [],
    );
    expectMatches(
      { employees: { firstName: ["Anna"], lastName: ["Jones"] } },
      [],
      [employees, nested],
    );
  });
});

describe("edge cases", () => {
  it("null vs missing", () => {
    expectMatches({ a: [null] }, [{ a: null }, { a: [null, 1] }], [{}, { a: "null" }, { a: [] }]);
    expectMatches({ a: [{ exists: true }] }, [{ a: null }], [{}]);
    expectMatches({ a: [{ exists: false }] }, [{}], [{ a: null }]);
    expectMatches({ a: ["x", { exists: false }] }, [{}, { a: "x" }], [{ a: "y" }]);
    expectMatches({ a: { b: [{ exists: false }] } }, [{}, { a: "leaf" }, { a: { c: 1 } }]);
  });

  it("numbers are not strings, and are compared as numbers", () => {
    expectMatches({ a: ["5"] }, [{ a: "5" }], [{ a: 5 }]);
    expectMatches({ a: [5] }, [{ a: 5 }, { a: 5.0 }, JSON.parse('{"a":5.0e0}')], [{ a: "5" }]);
    expectMatches({ a: [true] }, [{ a: true }], [{ a: "true" }, { a: 1 }]);
    expectMatches({ a: [123456789012] }, [{ a: 123456789012 }], [{ a: 123456789013 }]);
    expectMatches({ a: [{ prefix: "1" }] }, [{ a: "12" }], [{ a: 12 }]);
  });

  it("numeric ranges at every bound, to six decimals, within ±5e9", () => {
    expectMatches(
      { n: [{ numeric: [">=", 1, "<", 2] }] },
      [{ n: 1 }, { n: 1.999999 }],
      [{ n: 0.999999 }, { n: 2 }],
    );
    expectMatches({ n: [{ numeric: [">", -1.5] }] }, [{ n: -1.499999 }], [{ n: -1.5 }]);
    expectMatches({ n: [{ numeric: ["<=", 0] }] }, [{ n: 0 }, { n: -0 }], [{ n: 0.000001 }]);
    expectMatches(
      { n: [{ numeric: [">=", -5e9, "<=", 5e9] }] },
      [{ n: 5e9 }, { n: -5e9 }],
      [{ n: 5000000001 }, { n: -5000000001 }],
    );
    expectMatches({ n: [{ numeric: [">", 0] }] }, [{ n: [-1, 3] }], [{ n: [-1, 0] }, { n: [] }]);
  });

  it("arrays of objects, with exists: false per element only next to a positive field", () => {
    expectMatches(
      { items: { sku: [{ exists: false }] } },
      [{ items: [{ name: "a" }, { name: "b" }] }, { items: [] }, {}],
      [{ items: [{ name: "a" }, { name: "b", sku: 1 }] }],
    );
    expectMatches(
      { items: { name: ["a"], sku: [{ exists: false }] } },
      [{ items: [{ name: "a" }, { name: "b", sku: 1 }] }],
      [{ items: [{ name: "a", sku: 1 }, { name: "b" }] }],
    );
    expectMatches(
      { detail: { items: { price: [{ numeric: [">", 10] }], tag: ["sale"] } } },
      [
        d({
          items: [
            { price: 5, tag: "sale" },
            { price: 20, tag: ["new", "sale"] },
          ],
        }),
      ],
      [
        d({
          items: [
            { price: 5, tag: "sale" },
            { price: 20, tag: "new" },
          ],
        }),
      ],
    );
  });

  it("IPv4 and IPv6 CIDR blocks, and IP literals as exact values", () => {
    expectMatches(
      { ip: [{ cidr: "2001:db8::/32" }] },
      [
        { ip: "2001:0db8:85a3:0000:0000:8a2e:0370:7334" },
        { ip: "2001:DB8::1" },
        { ip: "2001:db8::" },
      ],
      [{ ip: "2001:db9::1" }, { ip: "10.0.0.1" }, { ip: "2001:db8::1%eth0" }, { ip: "nope" }],
    );
    expectMatches(
      { ip: [{ cidr: "::/0" }] },
      [{ ip: "::1" }, { ip: "ffff::" }],
      [{ ip: "1.2.3.4" }],
    );
    expectMatches({ ip: [{ cidr: "0.0.0.0/0" }] }, [{ ip: "255.255.255.255" }], [{ ip: "::1" }]);
    // Host bits in the block are ignored: 10.0.0.5/24 is 10.0.0.0/24.
    expectMatches({ ip: [{ cidr: "10.0.0.5/24" }] }, [{ ip: "10.0.0.1" }], [{ ip: "10.0.1.1" }]);
    expectMatches({ ip: [{ cidr: "10.0.0.0/31" }] }, [{ ip: "10.0.0.1" }], [{ ip: "10.0.0.2" }]);
    expectMatches(
      { ip: ["2001:db8::1", "10.0.0.1"] },
      [{ ip: "2001:0db8:0:0:0:0:0:1" }, { ip: "010.000.000.001" }],
      [{ ip: "2001:db8::2" }],
    );
  });

  it("wildcards with escapes", () => {
    expectMatches({ a: [{ wildcard: "a\\*b" }] }, [{ a: "a*b" }], [{ a: "axb" }, { a: "a\\*b" }]);
    expectMatches({ a: [{ wildcard: "a\\\\*" }] }, [{ a: "a\\" }, { a: "a\\xyz" }], [{ a: "ab" }]);
    expectMatches({ a: [{ wildcard: "*\\**" }] }, [{ a: "*" }, { a: "x*y" }], [{ a: "xy" }]);
    expectMatches({ a: [{ wildcard: "*" }] }, [{ a: "" }, { a: "anything" }], [{ a: 1 }, {}]);
    // The first and last runs may not overlap: "aba" does not match "ab*ba".
    expectMatches({ a: [{ wildcard: "ab*ba" }] }, [{ a: "abba" }, { a: "abXba" }], [{ a: "aba" }]);
    expectMatches({ a: [{ wildcard: "*Title*" }] }, [{ a: "My Title here" }], [{ a: "title" }]);
    expectMatches({ a: [{ wildcard: "x*y*z" }] }, [{ a: "xyz" }, { a: "x-y-z-z" }], [{ a: "xzy" }]);
    expectMatches({ a: [{ wildcard: "" }] }, [{ a: "" }], [{ a: "x" }]);
  });

  it("$or combined with other fields, and the later write to a field winning", () => {
    expectMatches(
      { source: ["app"], detail: { $or: [{ x: [1] }, { y: { z: [{ exists: true }] } }] } },
      [
        { source: "app", detail: { x: 1 } },
        { source: "app", detail: { y: { z: null } } },
      ],
      [
        { source: "other", detail: { x: 1 } },
        { source: "app", detail: { x: 2 } },
      ],
    );
    // As event-ruler compiles it: "a" inside the first branch replaces the outer "a".
    expectMatches(
      { a: ["1"], $or: [{ a: ["2"] }, { b: ["3"] }] },
      [{ a: "2" }, { a: "2", b: "9" }, { a: "1", b: "3" }],
      [{ a: "1" }, { b: "3" }],
    );
  });

  it("empty prefix and suffix match any string", () => {
    expectMatches({ a: [{ prefix: "" }] }, [{ a: "" }, { a: "x" }], [{ a: 1 }, { a: null }]);
    expectMatches({ a: [{ suffix: "" }] }, [{ a: "x" }], [{ a: false }]);
  });

  it("walks deeply nested and very long event arrays", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    // Called directly: JSON.stringify in expectMatches' messages would overflow on `deep`.
    expect(matchesEventPattern({ a: ["x"] }, { a: deep })).toBe(true);
    expect(matchesEventPattern({ a: [{ exists: false }] }, { a: deep })).toBe(false);
    const long = Array.from({ length: 200_000 }, (_, i) => ({ b: i }));
    expectMatches({ a: { b: [199_999] } }, [{ a: long }], [{ a: long.slice(0, -1) }]);
  });

  it("ignores fields the pattern does not name and keys of the prototype", () => {
    expectMatches({ constructor: [{ exists: false }] }, [{}]);
    expectMatches({ toString: ["x"] }, [{ toString: "x" }], [{}]);
  });
});

describe("checkEventPattern", () => {
  it("accepts patterns at the limits", () => {
    const deep = JSON.parse(
      `${'{"a":'.repeat(EVENT_PATTERN_MAX_DEPTH - 1)}{"b":[1]}${"}".repeat(EVENT_PATTERN_MAX_DEPTH - 1)}`,
    );
    expect(checkEventPattern(deep)).toBeUndefined();
    const big = { a: ["x".repeat(EVENT_PATTERN_MAX_CHARS - 10)] };
    expect(JSON.stringify(big).length).toBe(EVENT_PATTERN_MAX_CHARS);
    expect(checkEventPattern(big)).toBeUndefined();
  });

  it("refuses the wrong shapes", () => {
    expectInvalid([], /must be a JSON object, not an array/);
    expectInvalid(null, /not null/);
    expectInvalid("{}", /not a string/);
    expectInvalid({}, /empty objects/);
    expectInvalid({ detail: {} }, /^detail: empty objects/);
    expectInvalid({ source: [] }, /^source: empty arrays/);
    expectInvalid({ source: "aws.ec2" }, /^source: must be an object or an array/);
    expectInvalid({ a: [["x"]] }, /match values must be/);
    expectInvalid({ a: [undefined] }, /match values must be/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(checkEventPattern(cyclic)).toMatch(/not serializable/);
  });

  it("refuses patterns too big or too deep", () => {
    expectInvalid({ a: ["x".repeat(EVENT_PATTERN_MAX_CHARS)] }, /over the 2048 allowed/);
    const deep = JSON.parse(
      `${'{"a":'.repeat(EVENT_PATTERN_MAX_DEPTH)}{"b":[1]}${"}".repeat(EVENT_PATTERN_MAX_DEPTH)}`,
    );
    expectInvalid(deep, /more than 10 levels/);
  });

  it("refuses unknown operators and bad operands", () => {
    expectInvalid({ a: [{ contains: "x" }] }, /unrecognized match type contains/);
    expectInvalid({ a: [{}] }, /match expression name not found/);
    expectInvalid({ a: [{ prefix: "x", suffix: "y" }] }, /only one key/);
    expectInvalid({ a: [{ prefix: 1 }] }, /prefix match pattern must be a string/);
    expectInvalid({ a: [{ prefix: { foo: "x" } }] }, /unsupported prefix pattern: foo/);
    expectInvalid({ a: [{ suffix: { "equals-ignore-case": 1 } }] }, /must be a string/);
    expectInvalid({ a: [{ "equals-ignore-case": null }] }, /must be a string/);
    expectInvalid({ a: [{ exists: "yes" }] }, /true or false/);
    expectInvalid({ a: [{ wildcard: 5 }] }, /wildcard match pattern must be a string/);
  });

  it("refuses bad numeric expressions", () => {
    expectInvalid({ n: [{ numeric: 5 }] }, /must be an array/);
    expectInvalid({ n: [{ numeric: [] }] }, /invalid member in numeric match: \]/);
    expectInvalid({ n: [{ numeric: [5, ">"] }] }, /invalid member/);
    expectInvalid({ n: [{ numeric: ["==", 5] }] }, /unrecognized numeric range operator: ==/);
    expectInvalid({ n: [{ numeric: ["=", "5"] }] }, /value of equals must be numeric/);
    expectInvalid({ n: [{ numeric: [">"] }] }, /value of > must be numeric/);
    expectInvalid({ n: [{ numeric: ["=", 5, "<", 6] }] }, /too many elements/);
    expectInvalid({ n: [{ numeric: ["<", 5, ">", 1] }] }, /too many elements/);
    expectInvalid({ n: [{ numeric: [">", 5, ">", 6] }] }, /bad numeric range operator/);
    expectInvalid({ n: [{ numeric: [">", 5, "<"] }] }, /a range is/);
    expectInvalid({ n: [{ numeric: [">", 5, "<", 9, 1] }] }, /a range is/);
    expectInvalid({ n: [{ numeric: [">", 5, "<", 5] }] }, /bottom must be less than top/);
    expectInvalid({ n: [{ numeric: [">=", 6, "<=", 5] }] }, /bottom must be less than top/);
    expectInvalid({ n: [{ numeric: ["<", 6e9] }] }, /outside -5e9\.\.5e9/);
    expectInvalid({ n: [{ numeric: ["=", 0.1234567] }] }, /more than 6 decimal places/);
    expect(checkEventPattern({ n: [{ numeric: ["=", 1e-6] }] })).toBeUndefined();
  });

  it("refuses bad anything-but operands", () => {
    expectInvalid({ a: [{ "anything-but": [] }] }, /empty arrays/);
    expectInvalid({ a: [{ "anything-but": ["x", 1] }] }, /only strings or only numbers/);
    expectInvalid({ a: [{ "anything-but": true }] }, /only strings or only numbers/);
    expectInvalid({ a: [{ "anything-but": [null] }] }, /only strings or only numbers/);
    expectInvalid({ a: [{ "anything-but": 6e9 }] }, /outside/);
    expectInvalid({ a: [{ "anything-but": { prefix: "" } }] }, /empty prefix\/suffix/);
    expectInvalid({ a: [{ "anything-but": { prefix: 5 } }] }, /must be a string/);
    expectInvalid({ a: [{ "anything-but": { contains: "x" } }] }, /unsupported anything-but/);
    expectInvalid({ a: [{ "anything-but": { prefix: "a", suffix: "b" } }] }, /exactly one/);
    expectInvalid({ a: [{ "anything-but": { wildcard: "a**" } }] }, /consecutive wildcard/);
  });

  it("refuses malformed CIDR blocks", () => {
    expectInvalid({ ip: [{ cidr: 10 }] }, /must be a string/);
    expectInvalid({ ip: [{ cidr: "10.0.0.0" }] }, /one '\/' required/);
    expectInvalid({ ip: [{ cidr: "10.0.0.0/" }] }, /one '\/' required/);
    expectInvalid({ ip: [{ cidr: "10.0.0.0/8/8" }] }, /one '\/' required/);
    expectInvalid({ ip: [{ cidr: "10.0.0.0/x" }] }, /must be an integer/);
    expectInvalid({ ip: [{ cidr: "10.0.0.0/-1" }] }, /must not be negative/);
    expectInvalid({ ip: [{ cidr: "10.0.0.0/32" }] }, /IPv4 mask bits must be < 32/);
    expectInvalid({ ip: [{ cidr: "::1/128" }] }, /IPv6 mask bits must be < 128/);
    expectInvalid({ ip: [{ cidr: "256.0.0.0/8" }] }, /invalid IP address/);
    expectInvalid({ ip: [{ cidr: "example.com/8" }] }, /invalid IP address/);
    expectInvalid({ ip: [{ cidr: "1:2:3:4:5:6:7:8:9/64" }] }, /invalid IP address/);
    expectInvalid({ ip: [{ cidr: "1::2::3/64" }] }, /invalid IP address/);
    expect(checkEventPattern({ ip: [{ cidr: "10.0.0.0/+8" }] })).toBeUndefined();
  });

  it("refuses bad wildcards", () => {
    expectInvalid({ a: [{ wildcard: "a**b" }] }, /consecutive wildcard characters at position 2/);
    expectInvalid({ a: [{ wildcard: "a\\b" }] }, /invalid escape character at position 2/);
    expectInvalid({ a: [{ wildcard: "ab\\" }] }, /invalid escape character at position 3/);
  });

  it("refuses operator names as fields inside $or, and too many combinations", () => {
    expectInvalid({ $or: [{ prefix: ["a"] }, { b: ["c"] }] }, /"prefix" is an operator name/);
    expectInvalid({ $or: [{ a: { numeric: [1] } }, { b: ["c"] }] }, /^a: "numeric"/);
    expectInvalid({ $or: [{ a: [1] }, 5] }, /\$or members must be objects/);
    const fields = (n: number) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`f${i}`, { $or: [{ a: [1] }, { b: [2] }] }]),
      );
    expect(checkEventPattern(fields(9))).toBeUndefined();
    expectInvalid(fields(10), /more than 1000 combinations/);
  });

  it("makes matchesEventPattern throw on an invalid pattern", () => {
    expect(() => matchesEventPattern({ a: [] }, {})).toThrow(
      "invalid event pattern: a: empty arrays are not allowed",
    );
  });
});

describe("putEventsEntryToEvent", () => {
  const ids = {
    id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
    account: "111122223333",
    region: "us-west-1",
    now: Date.UTC(2017, 11, 22, 18, 43, 48, 789),
  };

  it("builds the envelope EventBridge delivers", () => {
    const resources = ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"];
    const event = putEventsEntryToEvent(
      {
        Source: "aws.ec2",
        DetailType: "EC2 Instance State-change Notification",
        Detail: JSON.stringify(EC2_EVENT.detail),
        Resources: resources,
      },
      ids,
    );
    expect(event).toEqual(EC2_EVENT);
    expect(event.resources).not.toBe(resources);
    expect(
      matchesEventPattern({ source: ["aws.ec2"], detail: { state: ["terminated"] } }, event),
    ).toBe(true);
  });

  it("defaults resources and takes Time, truncated to the second, over now", () => {
    const entry = { Source: "app", DetailType: "t", Detail: "{}" };
    expect(putEventsEntryToEvent(entry, ids)).toMatchObject({
      resources: [],
      detail: {},
      time: "2017-12-22T18:43:48Z",
    });
    expect(
      putEventsEntryToEvent({ ...entry, Time: "2024-01-02T05:04:05.999+02:00" }, ids).time,
    ).toBe("2024-01-02T03:04:05Z");
  });

  it("throws when Detail is not a JSON object, or Time or now is not a time", () => {
    const entry = { Source: "app", DetailType: "t" };
    expect(() => putEventsEntryToEvent({ ...entry, Detail: "{nope" }, ids)).toThrow(
      /^Detail is not valid JSON/,
    );
    expect(() => putEventsEntryToEvent({ ...entry, Detail: "[1]" }, ids)).toThrow(
      "Detail must be a JSON object, not an array",
    );
    expect(() => putEventsEntryToEvent({ ...entry, Detail: "null" }, ids)).toThrow(/not null/);
    expect(() => putEventsEntryToEvent({ ...entry, Detail: '"x"' }, ids)).toThrow(/not a string/);
    expect(() => putEventsEntryToEvent({ ...entry, Detail: "{}", Time: "yesterday" }, ids)).toThrow(
      /Time is not an ISO 8601 timestamp/,
    );
    expect(() =>
      putEventsEntryToEvent({ ...entry, Detail: "{}" }, { ...ids, now: Number.NaN }),
    ).toThrow(/now must be milliseconds/);
  });
});

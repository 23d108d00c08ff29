import {
  CloudWatchLogsClient,
  CreateLogStreamCommand,
  type CreateLogStreamCommandInput,
  DataAlreadyAcceptedException,
  GetLogEventsCommand,
  type GetLogEventsCommandInput,
  InvalidParameterException,
  InvalidSequenceTokenException,
  PutLogEventsCommand,
  type PutLogEventsCommandInput,
  ResourceAlreadyExistsException,
  ResourceNotFoundException,
  ServiceUnavailableException,
  ThrottlingException,
} from "@aws-sdk/client-cloudwatch-logs";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { statusOf } from "../../lib/api/http.js";
import { RequestError } from "../../lib/core/errors.js";
import {
  EVENT_OVERHEAD_BYTES,
  MAX_BATCH_BYTES,
  MAX_BATCH_SPAN_MS,
  MAX_MESSAGE_BYTES,
  splitMessage,
} from "../../lib/logs/cloudwatch-log-writer.js";
import { logStreamName, logUrl } from "../../lib/logs/cloudwatch-stream-names.js";
import {
  CloudWatchTaskLogs,
  type CloudWatchTaskLogsOptions,
} from "../../lib/logs/cloudwatch-task-log.js";
import type { TaskLogKey } from "../../lib/logs/task-log.js";

const GROUP = "/shoal/tasks";
const KEY: TaskLogKey = { workflow: "etl", instanceId: "i-1", code: "load", attempt: 1 };
const STREAM = "etl/i-1/load/1";
const T0 = Date.UTC(2026, 0, 1);
const DAY = 24 * 60 * 60 * 1000;
const meta = { $metadata: {} };

interface Stored {
  timestamp: number;
  message: string;
}

/**
 * CreateLogStream, PutLogEvents and GetLogEvents over memory, enforcing PutLogEvents' documented
 * batch limits. Forward tokens are `f/<index>/<generation>`; at the end of a stream the token
 * passed in comes back, as CloudWatch does.
 */
class FakeLogs {
  readonly streams = new Map<string, Stored[]>();
  readonly puts: PutLogEventsCommandInput[] = [];
  readonly gets: GetLogEventsCommandInput[] = [];
  creates = 0;
  /** Faults for the next PutLogEvents calls; `afterStore` stores the batch first. */
  readonly putFaults: Array<{ error: Error; afterStore?: boolean }> = [];
  readonly createFaults: Error[] = [];
  /** Caps events per GetLogEvents page; `sparse` empty pages come before the next events. */
  pageCap = Number.POSITIVE_INFINITY;
  sparse = 0;
  readonly issued = new Set<string>();
  readonly expired = new Set<string>();
  private inFlight = 0;
  maxInFlight = 0;

  events(stream = STREAM): Stored[] {
    return this.streams.get(`${GROUP}|${stream}`) ?? [];
  }

  batches(): number[] {
    return this.puts.map((p) => p.logEvents?.length ?? 0);
  }

  expireIssued(): void {
    for (const t of this.issued) this.expired.add(t);
  }

  create(input: CreateLogStreamCommandInput): object {
    this.creates++;
    const fault = this.createFaults.shift();
    if (fault) throw fault;
    const key = `${input.logGroupName}|${input.logStreamName}`;
    if (this.streams.has(key)) throw new ResourceAlreadyExistsException({ message: key, ...meta });
    this.streams.set(key, []);
    return {};
  }

  async put(input: PutLogEventsCommandInput): Promise<object> {
    this.puts.push(input);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve)); // the network: lets overlap show
      const list = this.streams.get(`${input.logGroupName}|${input.logStreamName}`);
      if (!list) throw new ResourceNotFoundException({ message: "no stream", ...meta });
      const events = input.logEvents ?? [];
      const invalid = (message: string) => new InvalidParameterException({ message, ...meta });
      if (events.length < 1 || events.length > 10_000) throw invalid("event count");
      let bytes = 0;
      for (const [i, e] of events.entries()) {
        const size = Buffer.byteLength(e.message ?? "", "utf8");
        if (size === 0) throw invalid("empty message");
        if (size + EVENT_OVERHEAD_BYTES > 262_144) throw invalid("event too large");
        if (i > 0 && (e.timestamp ?? 0) < (events[i - 1]?.timestamp ?? 0))
          throw invalid("not chronological");
        bytes += size + EVENT_OVERHEAD_BYTES;
      }
      if (bytes > 1_048_576) throw invalid("batch too large");
      if ((events.at(-1)?.timestamp ?? 0) - (events[0]?.timestamp ?? 0) > DAY)
        throw invalid("batch spans more than 24 hours");
      const fault = this.putFaults.shift();
      if (fault && !fault.afterStore) throw fault.error;
      for (const e of events) {
        const ev = { timestamp: e.timestamp ?? 0, message: e.message ?? "" };
        let at = list.length; // CloudWatch keeps a stream in timestamp order
        while (at > 0 && (list[at - 1]?.timestamp ?? 0) > ev.timestamp) at--;
        list.splice(at, 0, ev);
      }
      if (fault) throw fault.error;
      return {};
    } finally {
      this.inFlight--;
    }
  }

  get(input: GetLogEventsCommandInput): object {
    this.gets.push(input);
    const list = this.streams.get(`${input.logGroupName}|${input.logStreamName}`);
    if (!list) throw new ResourceNotFoundException({ message: "no stream", ...meta });
    let index = 0;
    let generation = 0;
    if (input.nextToken !== undefined) {
      const m = /^f\/(\d+)\/(\d+)$/.exec(input.nextToken);
      if (!m || this.expired.has(input.nextToken))
        throw new InvalidParameterException({ message: "bad or expired token", ...meta });
      index = Number(m[1]);
      generation = Number(m[2]);
    } else if (input.startTime !== undefined) {
      const start = input.startTime;
      index = list.findIndex((e) => e.timestamp >= start);
      if (index < 0) index = list.length;
    }
    const issue = (token: string) => {
      this.issued.add(token);
      return { nextForwardToken: token, nextBackwardToken: `b/${index}` };
    };
    if (index < list.length && this.sparse > 0) {
      this.sparse--;
      return { events: [], ...issue(`f/${index}/${generation + 1}`) };
    }
    const n = Math.min(input.limit ?? 10_000, this.pageCap);
    const events = list.slice(index, index + n).map((e) => ({ ...e, ingestionTime: e.timestamp }));
    if (events.length === 0 && input.nextToken !== undefined) {
      return { events, ...issue(input.nextToken) };
    }
    return { events, ...issue(`f/${index + events.length}/0`) };
  }
}

let fake: FakeLogs;
const client = new CloudWatchLogsClient({
  region: "eu-west-1",
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
});
const mock = mockClient(client);
let errors: Array<{ error: unknown; lost: number; stream: string }>;

beforeEach(() => {
  fake = new FakeLogs();
  errors = [];
  mock.reset();
  mock.on(CreateLogStreamCommand).callsFake((input) => fake.create(input));
  mock.on(PutLogEventsCommand).callsFake((input) => fake.put(input));
  mock.on(GetLogEventsCommand).callsFake((input) => fake.get(input));
});

afterEach(() => {
  vi.restoreAllMocks();
});

function logs(opts: Partial<CloudWatchTaskLogsOptions> = {}): CloudWatchTaskLogs {
  return new CloudWatchTaskLogs({
    logGroupName: GROUP,
    client: () => client,
    flushIntervalMs: 60_000,
    retryBaseMs: 1,
    onError: (error, lost, stream) => errors.push({ error, lost, stream }),
    ...opts,
  });
}

const messages = (stream = STREAM) => fake.events(stream).map((e) => e.message);

describe("stream names and console URLs", () => {
  it("names the stream <workflow>/<instanceId>/<taskCode>/<attempt>", () => {
    expect(logStreamName(KEY)).toBe(STREAM);
  });

  it("percent-encodes ':' and '*' (not allowed in stream names) and '%'", () => {
    const name = logStreamName({ workflow: "a:b", instanceId: "c*d", code: "e%f", attempt: 3 });
    expect(name).toBe("a%3Ab/c%2Ad/e%25f/3");
    expect(name).not.toMatch(/[:*]/);
  });

  it("keeps an over-long name within 512 characters and distinct", () => {
    const long = (code: string) =>
      logStreamName({ workflow: "w".repeat(300), instanceId: "i", code, attempt: 1 });
    const a = long("x".repeat(300));
    const b = long(`${"x".repeat(299)}y`);
    expect(a.length).toBeLessThanOrEqual(512);
    expect(a).not.toBe(b);
  });

  it("builds the console URL with the console's double encoding ('/' as $252F)", () => {
    expect(logUrl(KEY, { region: "eu-west-1", logGroupName: GROUP })).toBe(
      "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1" +
        "#logsV2:log-groups/log-group/$252Fshoal$252Ftasks/log-events/etl$252Fi-1$252Fload$252F1",
    );
    const odd = { ...KEY, workflow: "a:b [x]" };
    expect(logUrl(odd, { region: "us-east-1", logGroupName: "g" })).toContain(
      "/log-events/a$25253Ab$2520$255Bx$255D$252Fi-1",
    );
  });
});

describe("splitMessage", () => {
  it("leaves a message that fits alone", () => {
    expect(splitMessage("hello")).toEqual(["hello"]);
    const edge = "x".repeat(MAX_MESSAGE_BYTES);
    expect(splitMessage(edge)).toEqual([edge]);
  });

  it("splits a long line into events of at most 256 KiB including overhead", () => {
    const line = "y".repeat(600_000);
    const parts = splitMessage(line);
    expect(parts.map((p) => p.length)).toEqual([262_118, 262_118, 75_764]);
    expect(parts.join("")).toBe(line);
    expect(MAX_MESSAGE_BYTES + EVENT_OVERHEAD_BYTES).toBe(262_144);
  });

  it("never cuts a multi-byte character", () => {
    for (const ch of ["€", "😀", "é"]) {
      const line = ch.repeat(150_000);
      const parts = splitMessage(line);
      expect(parts.length).toBeGreaterThan(1);
      for (const p of parts) {
        expect(Buffer.byteLength(p)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
        expect(p).not.toContain("\uFFFD");
      }
      expect(parts.join("")).toBe(line);
    }
  });
});

describe("writing", () => {
  it("creates the stream on open; a redelivered attempt appends to the existing stream", async () => {
    const l = logs();
    const w1 = l.open(KEY);
    w1.write("first", T0);
    await w1.close();
    const w2 = l.open(KEY);
    w2.write("again", T0 + 1);
    await w2.close();
    expect(fake.creates).toBe(2);
    expect(messages()).toEqual(["first", "again"]);
    expect(errors).toEqual([]);
  });

  it("buffers until close, then sends one batch; close resolves when it is stored", async () => {
    const w = logs().open(KEY);
    for (let i = 0; i < 3; i++) w.write(`line ${i}`, T0 + i);
    expect(fake.puts).toHaveLength(0);
    await w.close();
    expect(fake.batches()).toEqual([3]);
    expect(fake.events()).toEqual([
      { timestamp: T0, message: "line 0" },
      { timestamp: T0 + 1, message: "line 1" },
      { timestamp: T0 + 2, message: "line 2" },
    ]);
  });

  it("flushes on the timer without close", async () => {
    const w = logs({ flushIntervalMs: 10 }).open(KEY);
    w.write("a", T0);
    w.write("b", T0);
    await vi.waitFor(() => expect(messages()).toEqual(["a", "b"]), { timeout: 5000 });
    w.write("c", T0);
    await vi.waitFor(() => expect(messages()).toEqual(["a", "b", "c"]), { timeout: 5000 });
    await w.close();
    expect(fake.batches()).toEqual([2, 1]);
  });

  it("sends a full batch at once: at most 10,000 events per batch", async () => {
    const w = logs().open(KEY);
    for (let i = 0; i < 10_001; i++) w.write(`n${i}`, T0);
    await vi.waitFor(() => expect(fake.batches()).toEqual([10_000]), { timeout: 5000 });
    await w.close();
    expect(fake.batches()).toEqual([10_000, 1]);
    expect(messages().at(-1)).toBe("n10000");
  });

  it("counts message bytes plus 26 per event against 1,048,576 bytes", async () => {
    const w = logs().open(KEY);
    const big = "x".repeat(MAX_MESSAGE_BYTES);
    for (let i = 0; i < 4; i++) w.write(big, T0); // exactly 4 × 262,144 = 1,048,576
    w.write("z", T0);
    await vi.waitFor(() => expect(fake.batches()).toEqual([4]), { timeout: 5000 });
    await w.close();
    expect(fake.batches()).toEqual([4, 1]);
    expect(4 * (MAX_MESSAGE_BYTES + EVENT_OVERHEAD_BYTES)).toBe(MAX_BATCH_BYTES);

    const w2 = logs().open({ ...KEY, attempt: 2 });
    for (let i = 0; i < 11; i++) w2.write("m".repeat(100_000), T0); // 10 × 100,026 fit, 11 do not
    await w2.close();
    expect(fake.batches().slice(2)).toEqual([10, 1]);
  });

  it("keeps a batch within 24 hours", async () => {
    const w = logs().open(KEY);
    const at = [T0, T0 + 3_600_000, T0 + MAX_BATCH_SPAN_MS - 1, T0 + DAY, T0 + DAY + 5];
    for (const t of at) w.write(`at ${t}`, t);
    await vi.waitFor(() => expect(fake.batches()).toEqual([3]), { timeout: 5000 });
    await w.close();
    expect(fake.batches()).toEqual([3, 2]);
    expect(fake.events().map((e) => e.timestamp)).toEqual(at);
  });

  it("splits a long line into several events with the line's timestamp", async () => {
    const w = logs().open(KEY);
    const line = `${"€".repeat(200_000)}end`;
    w.write("before", T0);
    w.write(line, T0 + 1);
    await w.close();
    const ev = fake.events();
    expect(ev).toHaveLength(1 + 3);
    expect(ev.slice(1).every((e) => e.timestamp === T0 + 1)).toBe(true);
    expect(
      ev
        .slice(1)
        .map((e) => e.message)
        .join(""),
    ).toBe(line);
  });

  it("keeps write order: timestamps never go backwards, one batch in flight at a time", async () => {
    const w = logs().open(KEY);
    w.write("one", T0 + 50);
    w.write("two", T0 + 10); // earlier: takes the previous line's time
    w.write("three", T0 + 60);
    for (let i = 0; i < 25_000; i++) w.write(`bulk ${i}`, T0 + 60 + (i % 7));
    await w.close();
    const ev = fake.events();
    expect(ev.slice(0, 3)).toEqual([
      { timestamp: T0 + 50, message: "one" },
      { timestamp: T0 + 50, message: "two" },
      { timestamp: T0 + 60, message: "three" },
    ]);
    expect(ev.slice(3).map((e) => e.message)).toEqual(
      Array.from({ length: 25_000 }, (_, i) => `bulk ${i}`),
    );
    expect(fake.batches().length).toBeGreaterThanOrEqual(3);
    expect(fake.maxInFlight).toBe(1);
  });

  it("makes newlines spaces and sends an empty line as a space", async () => {
    const w = logs().open(KEY);
    w.write("a\r\nb\nc", T0);
    w.write("", T0);
    await w.close();
    expect(messages()).toEqual(["a b c", " "]);
  });

  it("ignores writes after close; close twice is the same close", async () => {
    const w = logs({ flushIntervalMs: 5 }).open(KEY);
    w.write("kept", T0);
    const closed = w.close();
    expect(w.close()).toBe(closed);
    w.write("dropped", T0);
    await closed;
    w.write("dropped too", T0);
    expect(messages()).toEqual(["kept"]);
    expect(fake.puts).toHaveLength(1);
  });

  it("close with nothing written sends nothing", async () => {
    const w = logs().open(KEY);
    await w.close();
    expect(fake.puts).toHaveLength(0);
    expect(fake.creates).toBe(1);
  });
});

describe("retries", () => {
  const throttle = () => new ThrottlingException({ message: "Rate exceeded", ...meta });

  it("retries throttling and unavailability with backoff, losing nothing", async () => {
    fake.putFaults.push(
      { error: throttle() },
      { error: throttle() },
      { error: new ServiceUnavailableException({ message: "busy", ...meta }) },
      { error: new Error("socket hang up") },
    );
    const w = logs().open(KEY);
    for (let i = 0; i < 5; i++) w.write(`l${i}`, T0 + i);
    await w.close();
    expect(fake.puts).toHaveLength(5);
    expect(messages()).toEqual(["l0", "l1", "l2", "l3", "l4"]);
    expect(errors).toEqual([]);
  });

  it("does not resend a batch the service already accepted (DataAlreadyAccepted)", async () => {
    fake.putFaults.push({
      error: new DataAlreadyAcceptedException({ message: "already", ...meta }),
      afterStore: true,
    });
    const w = logs().open(KEY);
    w.write("once", T0);
    await w.close();
    expect(fake.puts).toHaveLength(1);
    expect(messages()).toEqual(["once"]);
    expect(errors).toEqual([]);
  });

  it("retries a legacy InvalidSequenceToken with the token it names; none is sent otherwise", async () => {
    fake.putFaults.push({
      error: new InvalidSequenceTokenException({
        message: "expected 49",
        expectedSequenceToken: "49-expected",
        ...meta,
      }),
    });
    const w = logs().open(KEY);
    w.write("line", T0);
    await w.close();
    expect(fake.puts.map((p) => p.sequenceToken)).toEqual([undefined, "49-expected"]);
    expect(messages()).toEqual(["line"]);
  });

  it("gives a batch up after maxAttempts, reports it, and goes on with the next", async () => {
    for (let i = 0; i < 3; i++) fake.putFaults.push({ error: throttle() });
    const w = logs({ maxAttempts: 3 }).open(KEY);
    w.write("lost 1", T0);
    w.write("lost 2", T0);
    await w.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ lost: 2, stream: STREAM });
    expect(fake.puts).toHaveLength(3);

    const w2 = logs({ maxAttempts: 3 }).open(KEY);
    w2.write("kept", T0 + 1);
    await w2.close();
    expect(messages()).toEqual(["kept"]);
  });

  it("does not retry a request the service refuses", async () => {
    fake.putFaults.push({ error: new InvalidParameterException({ message: "bad", ...meta }) });
    const w = logs().open(KEY);
    w.write("refused", T0);
    await w.close();
    expect(fake.puts).toHaveLength(1);
    expect(errors.map((e) => (e.error as Error).name)).toEqual(["InvalidParameterException"]);
  });

  it("creates a missing stream again and resends", async () => {
    const w = logs().open(KEY);
    w.write("a", T0);
    await vi.waitFor(() => expect(fake.creates).toBe(1));
    fake.streams.clear(); // deleted behind the writer's back
    await w.close();
    expect(fake.creates).toBe(2);
    expect(messages()).toEqual(["a"]);
  });

  it("retries a throttled CreateLogStream before sending", async () => {
    fake.createFaults.push(throttle(), throttle());
    const w = logs().open(KEY);
    w.write("a", T0);
    await w.close();
    expect(fake.creates).toBe(3);
    expect(messages()).toEqual(["a"]);
    expect(fake.puts).toHaveLength(1);
  });
});

describe("reading", () => {
  async function written(n: number, at: (i: number) => number = (i) => T0 + i): Promise<void> {
    const w = logs().open(KEY);
    for (let i = 0; i < n; i++) w.write(`line ${i}`, at(i));
    await w.close();
  }

  it("pages from the head with startFromHead and the limit", async () => {
    await written(25);
    const l = logs();
    const seen: string[] = [];
    const sizes: number[] = [];
    let token: string | undefined;
    for (let i = 0; i < 3; i++) {
      const page = await l.read(KEY, { limit: 10, ...(token ? { nextToken: token } : {}) });
      sizes.push(page.lines.length);
      seen.push(...page.lines.map((x) => x.message));
      expect(page.nextToken).toBeDefined();
      token = page.nextToken;
    }
    expect(sizes).toEqual([10, 10, 5]);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `line ${i}`));
    expect(fake.gets.every((g) => g.startFromHead === true && g.logStreamName === STREAM)).toBe(
      true,
    );
    expect(fake.gets[0]).toMatchObject({ limit: 10, logGroupName: GROUP });
    expect(fake.gets[0]?.nextToken).toBeUndefined();
    const first = await l.read(KEY, { limit: 1 });
    expect(first.lines).toEqual([{ timestamp: new Date(T0).toISOString(), message: "line 0" }]);
  });

  it("at the end returns the token it was given, and follows new lines with it", async () => {
    await written(3);
    const l = logs();
    const all = await l.read(KEY, { limit: 100 });
    expect(all.lines).toHaveLength(3);
    expect(fake.gets).toHaveLength(2); // the second call finds the end: the token stops moving
    const again = await l.read(KEY, { limit: 100, nextToken: all.nextToken as string });
    expect(again).toEqual({ lines: [], nextToken: all.nextToken });
    expect(fake.gets).toHaveLength(3);
    const w = l.open(KEY);
    w.write("new", T0 + 10);
    await w.close();
    const more = await l.read(KEY, { limit: 100, nextToken: all.nextToken as string });
    expect(more.lines.map((x) => x.message)).toEqual(["new"]);
  });

  it("reads a stream that does not exist yet as empty, with a token from the head", async () => {
    const l = logs();
    const page = await l.read(KEY, { limit: 10 });
    expect(page.lines).toEqual([]);
    expect(page.nextToken).toBeDefined();
    await written(2);
    const next = await l.read(KEY, { limit: 10, nextToken: page.nextToken as string });
    expect(next.lines.map((x) => x.message)).toEqual(["line 0", "line 1"]);
  });

  it("keeps paging past short and empty pages until the limit or the end", async () => {
    await written(12);
    fake.pageCap = 4;
    fake.sparse = 2;
    const page = await logs().read(KEY, { limit: 10 });
    expect(page.lines.map((x) => x.message)).toEqual(
      Array.from({ length: 10 }, (_, i) => `line ${i}`),
    );
    const rest = await logs().read(KEY, { limit: 10, nextToken: page.nextToken as string });
    expect(rest.lines).toHaveLength(2);
  });

  it("refuses tokens it did not hand out, or handed out for another log", async () => {
    await written(2);
    const l = logs();
    const page = await l.read(KEY, { limit: 1 });
    const token = page.nextToken as string;
    const wrap = (body: object) => `cw1.${Buffer.from(JSON.stringify(body)).toString("base64url")}`;
    const real = JSON.parse(Buffer.from(token.slice(4), "base64url").toString()) as object;
    const tampered = [
      wrap({ s: "x", t: "f/1/0" }),
      wrap({ ...real, t: 42 }),
      wrap({ ...real, a: T0, n: 0 }),
      wrap({ ...real, a: -1, n: 1 }),
      wrap([real]),
    ];
    for (const bad of ["garbage", "-1", "cw1.!!", "cw1.e30", ...tampered]) {
      const err = await l.read(KEY, { limit: 1, nextToken: bad }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RequestError);
      expect(err).toMatchObject({ code: "ValidationError" });
      expect(statusOf((err as RequestError).code)).toBe(400);
    }
    await expect(
      l.read({ ...KEY, attempt: 2 }, { limit: 1, nextToken: token }),
    ).rejects.toMatchObject({ code: "ValidationError" });
    const ok = await l.read(KEY, { limit: 5, nextToken: token });
    expect(ok.lines.map((x) => x.message)).toEqual(["line 1"]);
  });

  it("resumes from the last line when CloudWatch's token has expired (24 h)", async () => {
    await written(10, () => T0); // one timestamp for all: the position counts lines
    const l = logs();
    const page = await l.read(KEY, { limit: 7 });
    fake.expireIssued();
    const rest = await l.read(KEY, { limit: 2, nextToken: page.nextToken as string });
    expect(rest.lines.map((x) => x.message)).toEqual(["line 7", "line 8"]);
    fake.expireIssued();
    const last = await l.read(KEY, { limit: 5, nextToken: rest.nextToken as string });
    expect(last.lines.map((x) => x.message)).toEqual(["line 9"]);
    expect(fake.gets.some((g) => g.startTime === T0)).toBe(true);
  });

  it("passes other errors on", async () => {
    mock.on(GetLogEventsCommand).rejects(new Error("AccessDenied"));
    await expect(logs().read(KEY, { limit: 1 })).rejects.toThrow("AccessDenied");
  });
});

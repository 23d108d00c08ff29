// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
/**
 * LAMBDA tasks: the plugin against a mocked Lambda client (aws-sdk-client-mock patches the
 * prototype, so the client of the context's bundle is mocked too), JSON-aware parameter
 * substitution, and the worker running LAMBDA task messages through its plugin table.
 * STEP_FUNCTIONS: aws-tasks-step-functions.test.ts; validation: aws-tasks-validate.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  InvokeCommand,
  type InvokeCommandOutput,
  LambdaClient,
  ResourceNotFoundException,
  TooManyRequestsException,
} from "@aws-sdk/client-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAwsClients } from "../../lib/aws/clients.js";
import type { LambdaTaskDefinition, WorkerTaskDefinition } from "../../lib/core/model.js";
import { ParamError } from "../../lib/core/params.js";
import { taskSchema } from "../../lib/core/validate-tasks.js";
import { Worker } from "../../lib/engine/worker.js";
import type { TaskLogs } from "../../lib/logs/task-log.js";
import type { DispatcherMessage, TaskMessage } from "../../lib/queue/messages.js";
import type { Queues } from "../../lib/queue/queues.js";
import type { Store } from "../../lib/store/store.js";
import { runLambda } from "../../lib/tasks/lambda.js";
import type { TaskRunContext } from "../../lib/tasks/plugin.js";
import { substituteJson, substituteTask } from "../../lib/tasks/substitute.js";
import { until } from "../helpers/poll.js";

/** The plugins' clients (LAMBDA and STEP_FUNCTIONS: their SDK classes are mocked). */
const CLIENTS = createAwsClients({ region: "us-east-1", endpoints: {} });

const lambda = mockClient(LambdaClient);
beforeEach(() => lambda.reset());
afterAll(() => lambda.restore());

const BASE_MS = Date.UTC(2026, 10, 21, 5, 30, 45);
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: unknown) => new TextDecoder().decode(b as Uint8Array);
/** A response payload as the SDK hands it out (a Uint8Array subclass). */
const payloadOf = (s: string) => enc(s) as unknown as InvokeCommandOutput["Payload"];

function lambdaTask(extra: Record<string, unknown> = {}): LambdaTaskDefinition {
  return taskSchema.parse({
    code: "fn",
    type: "LAMBDA",
    functionName: "my-function",
    payload: '{"a": 1}',
    ...extra,
  }) as LambdaTaskDefinition;
}

/** A run context with a collecting log, its own abort controller and recorded warnings. */
function context(task: WorkerTaskDefinition) {
  const lines: string[] = [];
  const warnings: string[] = [];
  const kill = new AbortController();
  const ctx: TaskRunContext = {
    task,
    params: {},
    env: { SHOAL_INSTANCE_ID: "inst-1", SHOAL_TASK_CODE: "fn", SHOAL_ATTEMPT: "1" },
    log: { write: (line) => lines.push(line), close: async () => {} },
    signal: kill.signal,
    workDir: "/nonexistent",
    clients: CLIENTS,
    warn: (w) => warnings.push(w),
  };
  return { ctx, lines, warnings, kill };
}

/** A promise and its resolver, to hold a mocked call open until the test lets it go. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("LAMBDA plugin", () => {
  it("invokes synchronously with the payload bytes, qualifier and log tail, and logs the answer", async () => {
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      ExecutedVersion: "7",
      LogResult: Buffer.from("START RequestId: 1\nhello from the function\nEND\n").toString(
        "base64",
      ),
      Payload: payloadOf('{"ok":true}'),
    });
    const { ctx, lines } = context(lambdaTask({ qualifier: "live", payload: '{"n": 42}' }));
    expect(await runLambda(ctx)).toEqual({ state: "SUCCESS" });
    const calls = lambda.commandCalls(InvokeCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]?.args[0].input;
    expect(input).toMatchObject({
      FunctionName: "my-function",
      InvocationType: "RequestResponse",
      LogType: "Tail",
      Qualifier: "live",
    });
    expect(dec(input?.Payload)).toBe('{"n": 42}');
    // The request can be aborted: the signal reaches the SDK.
    const options = (lambda.call(0).args as unknown[])[1];
    expect(options).toMatchObject({ abortSignal: expect.any(AbortSignal) });
    const log = lines.join("\n");
    expect(log).toContain("payload 9 bytes");
    expect(log).toMatch(/Lambda status 200, executed version 7, \d+ ms, response 11 bytes/);
    expect(log).toContain("hello from the function");
    expect(log).toContain('{"ok":true}');
  });

  it("sends no Qualifier when none is set", async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payloadOf("null") });
    const { ctx } = context(lambdaTask());
    expect((await runLambda(ctx)).state).toBe("SUCCESS");
    expect(lambda.commandCalls(InvokeCommand)[0]?.args[0].input).not.toHaveProperty("Qualifier");
  });

  it("fails with the error type and message of a FunctionError", async () => {
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      FunctionError: "Unhandled",
      Payload: payloadOf(
        '{"errorType":"TypeError","errorMessage":"x is undefined","stackTrace":["at f"]}',
      ),
    });
    const { ctx, lines } = context(lambdaTask());
    expect(await runLambda(ctx)).toEqual({
      state: "FAILURE",
      error: "function error (Unhandled): TypeError: x is undefined",
    });
    expect(lines.join("\n")).toContain("function error Unhandled");
  });

  it("names throttling, so that retries are the remedy", async () => {
    lambda.on(InvokeCommand).rejects(
      new TooManyRequestsException({
        message: "Rate exceeded",
        $metadata: { httpStatusCode: 429 },
      }),
    );
    const { ctx } = context(lambdaTask());
    const r = await runLambda(ctx);
    expect(r.state).toBe("FAILURE");
    expect(r.error).toMatch(/throttled.*TooManyRequestsException.*Rate exceeded.*retries/);
  });

  it("names the AWS error code of a failed call", async () => {
    lambda.on(InvokeCommand).rejects(
      new ResourceNotFoundException({
        message: "Function not found: my-function",
        $metadata: { httpStatusCode: 404 },
      }),
    );
    const { ctx } = context(lambdaTask());
    expect(await runLambda(ctx)).toEqual({
      state: "FAILURE",
      error: "Lambda Invoke failed with ResourceNotFoundException: Function not found: my-function",
    });
  });

  it("fails a payload over 256 KiB without sending a request", async () => {
    const big = JSON.stringify({ data: "x".repeat(256 * 1024) });
    const { ctx, lines } = context({ ...lambdaTask(), payload: big });
    const r = await runLambda(ctx);
    expect(r.state).toBe("FAILURE");
    expect(r.error).toMatch(/payload is \d+ bytes .* more than the 262144 allowed/);
    expect(lambda.calls()).toHaveLength(0);
    expect(lines.join("\n")).toContain("not invoked");
  });

  it("fails a payload that is not JSON without sending a request", async () => {
    const { ctx } = context({ ...lambdaTask(), payload: '{"a": 1,' });
    const r = await runLambda(ctx);
    expect(r.state).toBe("FAILURE");
    expect(r.error).toMatch(/^the payload is not JSON: /);
    expect(lambda.calls()).toHaveLength(0);
  });

  it("takes OUT parameters from the JSON response by JSON path", async () => {
    lambda
      .on(InvokeCommand)
      .resolves({ StatusCode: 200, Payload: payloadOf('{"data":{"id":7,"tags":["a","b"]}}') });
    const outputs = { id: "$.data.id", tags: "$.data.tags", first: "$.data.tags[0]" };
    const { ctx } = context(lambdaTask({ outputs }));
    expect(await runLambda(ctx)).toEqual({
      state: "SUCCESS",
      outputs: { id: "7", tags: '["a","b"]', first: "a" },
    });
  });

  it("fails when an output path matches nothing or the response is not JSON", async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payloadOf('{"data":{}}') });
    const missing = await runLambda(context(lambdaTask({ outputs: { id: "$.data.id" } })).ctx);
    expect(missing).toEqual({
      state: "FAILURE",
      error: "output 'id': $.data.id matched nothing in the function's response",
    });
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payloadOf("not json") });
    const text = await runLambda(context(lambdaTask({ outputs: { id: "$.id" } })).ctx);
    expect(text.error).toBe("outputs need JSON, and the function's response is not JSON");
  });

  it("ends KILLED when the abort signal fires during the call", async () => {
    const called = deferred<void>();
    lambda.on(InvokeCommand).callsFake(() => {
      called.resolve();
      return new Promise(() => {}); // never answers
    });
    const { ctx, kill } = context(lambdaTask());
    const running = runLambda(ctx);
    await called.promise;
    kill.abort("killed: the workflow timed out after 60s");
    expect(await running).toEqual({
      state: "KILLED",
      error: "killed: the workflow timed out after 60s",
    });
  });

  it("says 'killed on request' when the kill gives no reason", async () => {
    const called = deferred<void>();
    lambda.on(InvokeCommand).callsFake(() => {
      called.resolve();
      return new Promise(() => {});
    });
    const { ctx, kill } = context(lambdaTask());
    const running = runLambda(ctx);
    await called.promise;
    kill.abort();
    expect(await running).toEqual({ state: "KILLED", error: "killed on request" });
  });

  it("fails at a FAIL timeout, and only warns at a WARN timeout", async () => {
    lambda.on(InvokeCommand).callsFake(() => new Promise(() => {}));
    const fail = await runLambda(context({ ...lambdaTask(), timeoutSeconds: 0.05 }).ctx);
    expect(fail.state).toBe("FAILURE");
    expect(fail.error).toMatch(/^no answer within 0.05s/);

    const answer = deferred<Partial<InvokeCommandOutput>>();
    lambda.on(InvokeCommand).callsFake(() => answer.promise);
    const warnTask = { ...lambdaTask(), timeoutSeconds: 0.02, timeoutStrategy: "WARN" as const };
    const { ctx, warnings, lines } = context(warnTask);
    const running = runLambda(ctx);
    await until(() => warnings.length > 0, { intervalMs: 5, what: "the WARN timeout" });
    answer.resolve({ StatusCode: 200, Payload: payloadOf("{}") });
    expect(await running).toEqual({ state: "SUCCESS" });
    expect(warnings).toEqual(["invocation still running after its timeout of 0.02s"]);
    expect(lines.join("\n")).toContain("WARNING invocation still running");
  });
});

describe("substituteJson and LAMBDA substitution", () => {
  const sub = (template: string, params: Record<string, string>) =>
    substituteJson(template, params, BASE_MS);

  it("escapes values inside JSON strings: quotes cannot break out or add keys", () => {
    const params = {
      user: 'x", "admin": true, "y": "',
      path: "C:\\temp\\new",
      note: 'line1\nline2\t"quoted"\u0001',
    };
    const text = sub(
      '{"user": "${user}", "admin": false, "path": "${path}", "note": "<${note}>"}',
      params,
    );
    expect(JSON.parse(text)).toEqual({
      user: params.user,
      admin: false,
      path: params.path,
      note: `<${params.note}>`,
    });
  });

  it("inserts values outside strings as they are (numbers, lists, objects)", () => {
    const text = sub('{"n": ${n}, "list": ${list}, "obj": ${obj}}', {
      n: "42",
      list: "[1, 2]",
      obj: '{"k": "v"}',
    });
    expect(JSON.parse(text)).toEqual({ n: 42, list: [1, 2], obj: { k: "v" } });
  });

  it("tells strings from the rest by the template: escaped quotes, keys, time expressions", () => {
    const text = sub('{"say \\"${a}\\"": "$[yyyyMMdd]", "${a}": "${HOME}", "v": ${a}}', {
      a: "1",
    });
    // An inserted value is never scanned again, and unknown names stay as written.
    expect(JSON.parse(text)).toEqual({ 'say "1"': "20261121", "1": "${HOME}", v: 1 });
    expect(sub('["${v}"]', { v: "${w}", w: "no" })).toBe('["${w}"]');
  });

  it("substituteTask fills the payload, and fails when the result is not JSON", () => {
    const task = lambdaTask({ payload: '{"n": ${n}, "who": "${who}"}' });
    const done = substituteTask(task, { n: "3", who: 'a"b' }, BASE_MS);
    expect(done.type === "LAMBDA" && JSON.parse(done.payload)).toEqual({ n: 3, who: 'a"b' });
    // A raw value that breaks the document fails the attempt before anything is sent.
    expect(() => substituteTask(task, { n: "3,", who: "x" }, BASE_MS)).toThrow(ParamError);
    expect(() => substituteTask(task, { n: "3,", who: "x" }, BASE_MS)).toThrow(
      /^the payload after parameter substitution is not JSON: /,
    );
  });
});

describe("the worker runs LAMBDA task messages", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "shoal-aws-tasks-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  async function runMessage(overrides: Partial<TaskMessage>) {
    const events: DispatcherMessage[] = [];
    const updates: Array<Record<string, unknown>> = [];
    const store = {
      updateTask: async (_k: unknown, _from: unknown, changes: Record<string, unknown>) => {
        updates.push(changes);
        return { ...changes };
      },
      getTaskInstance: async () => undefined,
      pendingHalt: async () => undefined,
    } as unknown as Store;
    const queues = {
      sendToDispatcher: async (e: DispatcherMessage[]) => void events.push(...e),
    } as unknown as Queues;
    const logs: TaskLogs = {
      open: () => ({ write: () => {}, close: async () => {} }),
    } as unknown as TaskLogs;
    const worker = new Worker({
      store,
      queues,
      logs,
      now: () => BASE_MS,
      dataDir,
      leaseMs: 60_000,
      leaseRenewMs: 60_000,
      visibilityTimeoutSeconds: 60,
      clients: CLIENTS,
    });
    const msg: TaskMessage = {
      instanceId: "inst-1",
      workflow: "wf",
      version: 1,
      code: "fn",
      attempt: 1,
      instancePriority: "MEDIUM",
      dryRun: false,
      submittedAt: BASE_MS,
      task: lambdaTask({ payload: '{"who": "${who}"}', outputs: { id: "$.id" } }),
      params: { who: 'an "admin"' },
      ...overrides,
    };
    await worker.handleRecord({
      messageId: "m1",
      receiptHandle: "rh1",
      body: JSON.stringify(msg),
      attributes: {
        ApproximateReceiveCount: "1",
        SentTimestamp: String(BASE_MS),
        SenderId: "000000000000",
        ApproximateFirstReceiveTimestamp: String(BASE_MS),
      },
      messageAttributes: {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:tasks",
      awsRegion: "us-east-1",
    });
    return { events, updates };
  }

  it("substitutes the payload, invokes, and reports SUCCESS with the OUT parameters", async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payloadOf('{"id":"r-9"}') });
    const { events } = await runMessage({});
    expect(dec(lambda.commandCalls(InvokeCommand)[0]?.args[0].input.Payload)).toBe(
      '{"who": "an \\"admin\\""}',
    );
    expect(events).toEqual([
      expect.objectContaining({ kind: "task", state: "SUCCESS", outputs: { id: "r-9" } }),
    ]);
  });

  it("invokes nothing on a dry run", async () => {
    const { events } = await runMessage({ dryRun: true });
    expect(lambda.calls()).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ state: "SUCCESS" })]);
  });

  it("fails the attempt when the substituted payload is not JSON", async () => {
    const { events, updates } = await runMessage({
      task: lambdaTask({ payload: '{"n": ${n}}' }),
      params: { n: "1}" },
    });
    expect(lambda.calls()).toHaveLength(0);
    expect(events).toEqual([expect.objectContaining({ state: "FAILURE" })]);
    // The result write (the worker's last write is the clear of its sent event, §3 outbox).
    expect(updates.find((u) => u.state === "FAILURE")?.error).toMatch(
      /payload after parameter substitution is not JSON/,
    );
  });
});

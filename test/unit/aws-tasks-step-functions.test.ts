/**
 * STEP_FUNCTIONS tasks: the plugin against a mocked Step Functions client (aws-sdk-client-mock
 * patches the prototype, so the client of the context's bundle is mocked too), and its
 * execution names, ARNs and poll intervals. Tasks are built past validation where a test needs
 * sub-second polls and timeouts.
 */
import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  ExecutionAlreadyExists,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { createAwsClients } from "../../lib/aws/clients.js";
import type { StepFunctionsTaskDefinition } from "../../lib/core/model.js";
import { taskSchema } from "../../lib/core/validate-tasks.js";
import type { TaskRunContext } from "../../lib/tasks/plugin.js";
import {
  defaultExecutionName,
  executionArnFor,
  pollDelayMs,
  runStepFunctions,
} from "../../lib/tasks/step-functions.js";
import { until } from "../helpers/poll.js";

/** The plugins' clients (LAMBDA and STEP_FUNCTIONS: their SDK classes are mocked). */
const CLIENTS = createAwsClients({ region: "us-east-1", endpoints: {} });

const sfn = mockClient(SFNClient);
beforeEach(() => sfn.reset());
afterAll(() => sfn.restore());

const SM = "arn:aws:states:us-east-1:123456789012:stateMachine:orders";
const NAME = "shoal-inst-1-load-2";
const EXECUTION = `arn:aws:states:us-east-1:123456789012:execution:orders:${NAME}`;
const meta = { $metadata: {} };

/** An error shaped as the SDK throws one for an AWS error code without its own class. */
function awsError(name: string, message: string, httpStatusCode: number) {
  return Object.assign(new Error(message), {
    name,
    $fault: "client",
    $metadata: { httpStatusCode },
  });
}

/** A valid task, with polls every millisecond (below what validation allows). */
function sfnTask(extra: Partial<StepFunctionsTaskDefinition> = {}): StepFunctionsTaskDefinition {
  const parsed = taskSchema.parse({
    code: "load",
    type: "STEP_FUNCTIONS",
    stateMachineArn: SM,
    input: '{"order": 1}',
  }) as StepFunctionsTaskDefinition;
  return { ...parsed, pollIntervalSeconds: 0.001, ...extra };
}

function context(task: StepFunctionsTaskDefinition) {
  const lines: string[] = [];
  const warnings: string[] = [];
  const kill = new AbortController();
  const ctx: TaskRunContext = {
    task,
    params: {},
    env: { SHOAL_INSTANCE_ID: "inst-1", SHOAL_TASK_CODE: "load", SHOAL_ATTEMPT: "2" },
    log: { write: (line) => lines.push(line), close: async () => {} },
    signal: kill.signal,
    workDir: "/nonexistent",
    clients: CLIENTS,
    warn: (w) => warnings.push(w),
  };
  return { ctx, lines, warnings, kill };
}

const described = (status: string, extra: Partial<DescribeExecutionCommandOutput> = {}) => ({
  executionArn: EXECUTION,
  stateMachineArn: SM,
  status,
  startDate: new Date(0),
  input: '{"order": 1}',
  ...extra,
});

/** DescribeExecution answers these in turn, then repeats the last one. */
function describes(...answers: Array<ReturnType<typeof described>>) {
  let stub = sfn.on(DescribeExecutionCommand);
  for (const a of answers) stub = stub.resolvesOnce(a as never);
  stub.resolves(answers.at(-1) as never);
}

describe("STEP_FUNCTIONS plugin", () => {
  it("starts a named execution and polls it through RUNNING to SUCCEEDED, with outputs", async () => {
    sfn.on(StartExecutionCommand).resolves({ executionArn: EXECUTION, startDate: new Date() });
    describes(
      described("RUNNING"),
      described("RUNNING"),
      described("SUCCEEDED", { output: '{"total": 12.5, "ids": [3, 4]}' }),
    );
    const { ctx, lines } = context(sfnTask({ outputs: { total: "$.total", last: "$.ids[1]" } }));
    expect(await runStepFunctions(ctx)).toEqual({
      state: "SUCCESS",
      outputs: { total: "12.5", last: "4" },
    });
    expect(sfn.commandCalls(StartExecutionCommand)[0]?.args[0].input).toEqual({
      stateMachineArn: SM,
      name: NAME,
      input: '{"order": 1}',
    });
    const polls = sfn.commandCalls(DescribeExecutionCommand);
    expect(polls).toHaveLength(3);
    expect(polls[0]?.args[0].input).toEqual({ executionArn: EXECUTION });
    // State changes are logged once each.
    expect(lines.filter((l) => /^shoal: execution (RUNNING|SUCCEEDED)/.test(l))).toEqual([
      "shoal: execution RUNNING",
      "shoal: execution SUCCEEDED",
    ]);
    expect(sfn.commandCalls(StopExecutionCommand)).toHaveLength(0);
  });

  it("starts without input when the task has none, and uses its executionName", async () => {
    sfn.on(StartExecutionCommand).resolves({ executionArn: EXECUTION, startDate: new Date() });
    describes(described("SUCCEEDED", { input: "{}" }));
    const { input: _none, ...task } = sfnTask({ executionName: "nightly-20261121" });
    expect((await runStepFunctions(context(task).ctx)).state).toBe("SUCCESS");
    expect(sfn.commandCalls(StartExecutionCommand)[0]?.args[0].input).toEqual({
      stateMachineArn: SM,
      name: "nightly-20261121",
    });
  });

  it.each([
    ["FAILED", "States.TaskFailed", "the order service answered 500"],
    ["TIMED_OUT", "States.Timeout", "the execution timed out"],
    ["ABORTED", undefined, undefined],
  ])("maps %s to FAILURE with the error and cause", async (status, error, cause) => {
    sfn.on(StartExecutionCommand).resolves({ executionArn: EXECUTION, startDate: new Date() });
    describes(described("RUNNING"), described(status, { error, cause }));
    const { ctx, lines } = context(sfnTask());
    const expected = `execution ${status}${error ? `: ${error}` : ""}${cause ? ` (${cause})` : ""}`;
    expect(await runStepFunctions(ctx)).toEqual({ state: "FAILURE", error: expected });
    if (cause) expect(lines).toContain(cause);
    expect(sfn.commandCalls(StopExecutionCommand)).toHaveLength(0);
  });

  it("follows an execution of its own name on ExecutionAlreadyExists (a redelivery)", async () => {
    sfn
      .on(StartExecutionCommand)
      .rejects(new ExecutionAlreadyExists({ message: "Execution Already Exists", ...meta }));
    describes(described("SUCCEEDED", { input: '{ "order" : 1 }', output: '{"n": 1}' }));
    const { ctx, lines } = context(sfnTask({ outputs: { n: "$.n" } }));
    expect(await runStepFunctions(ctx)).toEqual({ state: "SUCCESS", outputs: { n: "1" } });
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(1);
    expect(sfn.commandCalls(DescribeExecutionCommand)[0]?.args[0].input).toEqual({
      executionArn: EXECUTION,
    });
    expect(lines.join("\n")).toContain("exists already");
  });

  it("does not follow an execution of that name with another input", async () => {
    sfn
      .on(StartExecutionCommand)
      .rejects(new ExecutionAlreadyExists({ message: "Execution Already Exists", ...meta }));
    describes(described("RUNNING", { input: '{"order": 2}' }));
    const r = await runStepFunctions(context(sfnTask()).ctx);
    expect(r.state).toBe("FAILURE");
    expect(r.error).toMatch(/exists already with a different input/);
    expect(sfn.commandCalls(StopExecutionCommand)).toHaveLength(0);
  });

  it("stops the execution and ends KILLED when the abort signal fires", async () => {
    sfn.on(StartExecutionCommand).resolves({ executionArn: EXECUTION, startDate: new Date() });
    describes(described("RUNNING"));
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
    const { ctx, kill, lines } = context(sfnTask());
    const running = runStepFunctions(ctx);
    await until(() => sfn.commandCalls(DescribeExecutionCommand).length >= 2, {
      intervalMs: 5,
      what: "two polls",
    });
    // The kill's reason (lib/engine/halts.ts) becomes the attempt's error and the stop's cause.
    kill.abort("killed: the instance was stopped");
    expect(await running).toEqual({ state: "KILLED", error: "killed: the instance was stopped" });
    const stops = sfn.commandCalls(StopExecutionCommand);
    expect(stops).toHaveLength(1);
    expect(stops[0]?.args[0].input).toEqual({
      executionArn: EXECUTION,
      error: "Shoal.Killed",
      cause: "Shoal task 'load' was killed: the instance was stopped",
    });
    expect(lines.join("\n")).toContain("execution stopped");
  });

  it("stops the execution even when killed while StartExecution is under way", async () => {
    let called = false;
    sfn.on(StartExecutionCommand).callsFake(() => {
      called = true;
      return new Promise(() => {});
    });
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
    const { ctx, kill } = context(sfnTask());
    const running = runStepFunctions(ctx);
    await until(() => called, { intervalMs: 5, what: "StartExecution" });
    kill.abort();
    expect((await running).state).toBe("KILLED");
    expect(sfn.commandCalls(StopExecutionCommand)[0]?.args[0].input.executionArn).toBe(EXECUTION);
  });

  it("stops the execution at a FAIL timeout, and only warns at a WARN timeout", async () => {
    sfn.on(StartExecutionCommand).resolves({ executionArn: EXECUTION, startDate: new Date() });
    describes(described("RUNNING"));
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
    const fail = await runStepFunctions(context(sfnTask({ timeoutSeconds: 0.05 })).ctx);
    expect(fail).toEqual({
      state: "FAILURE",
      error: "timed out after 0.05s; the execution was stopped",
    });
    expect(sfn.commandCalls(StopExecutionCommand)[0]?.args[0].input).toMatchObject({
      executionArn: EXECUTION,
      error: "Shoal.Timeout",
    });

    sfn.resetHistory();
    const { ctx, warnings } = context(sfnTask({ timeoutSeconds: 0.02, timeoutStrategy: "WARN" }));
    // RUNNING until the warning has been given, then SUCCEEDED.
    sfn
      .on(DescribeExecutionCommand)
      .callsFake(async () => described(warnings.length > 0 ? "SUCCEEDED" : "RUNNING"));
    expect(await runStepFunctions(ctx)).toEqual({ state: "SUCCESS" });
    expect(warnings).toEqual(["execution still running after its timeout of 0.02s"]);
    expect(sfn.commandCalls(StopExecutionCommand)).toHaveLength(0);
  });

  it("fails when StartExecution fails, naming the code and throttling", async () => {
    sfn
      .on(StartExecutionCommand)
      .rejects(new StateMachineDoesNotExist({ message: "State Machine Does Not Exist", ...meta }));
    expect((await runStepFunctions(context(sfnTask()).ctx)).error).toBe(
      "Step Functions StartExecution failed with StateMachineDoesNotExist: State Machine Does Not Exist",
    );
    sfn.on(StartExecutionCommand).rejects(awsError("ThrottlingException", "Rate exceeded", 400));
    expect((await runStepFunctions(context(sfnTask()).ctx)).error).toMatch(
      /throttled by AWS \(ThrottlingException\)/,
    );
    expect(sfn.commandCalls(DescribeExecutionCommand)).toHaveLength(0);
  });

  it("rides out throttled polls, and stops the execution when it cannot follow it", async () => {
    sfn.on(StartExecutionCommand).resolves({ executionArn: EXECUTION, startDate: new Date() });
    const throttled = awsError("ThrottlingException", "Rate exceeded", 400);
    sfn
      .on(DescribeExecutionCommand)
      .rejectsOnce(throttled)
      .rejectsOnce(throttled)
      .resolves(described("SUCCEEDED") as never);
    expect((await runStepFunctions(context(sfnTask()).ctx)).state).toBe("SUCCESS");

    sfn.reset();
    sfn.on(StartExecutionCommand).resolves({ executionArn: EXECUTION, startDate: new Date() });
    sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
    sfn
      .on(DescribeExecutionCommand)
      .rejects(awsError("AccessDeniedException", "not authorized", 400));
    const r = await runStepFunctions(context(sfnTask()).ctx);
    expect(r.error).toMatch(/DescribeExecution failed with AccessDeniedException/);
    expect(sfn.commandCalls(StopExecutionCommand)).toHaveLength(1);
  });

  it("fails an input over 256 KiB or not JSON without starting anything", async () => {
    const big = JSON.stringify({ data: "x".repeat(256 * 1024) });
    expect((await runStepFunctions(context(sfnTask({ input: big })).ctx)).error).toMatch(
      /input is \d+ bytes after parameter substitution, more than the 262144 allowed/,
    );
    expect((await runStepFunctions(context(sfnTask({ input: "{" })).ctx)).error).toMatch(
      /^the input is not JSON: /,
    );
    expect(sfn.calls()).toHaveLength(0);
  });
});

describe("execution names, ARNs and poll intervals", () => {
  it("names an attempt shoal-<instance>-<code>-<attempt> when that fits", () => {
    expect(defaultExecutionName("inst-1", "load", 2)).toBe("shoal-inst-1-load-2");
    expect(defaultExecutionName("inst-1", "load", 2)).toBe(
      defaultExecutionName("inst-1", "load", "2"),
    );
  });

  it("cuts long or unusual names to 80 characters of [A-Za-z0-9_-], keeping them apart", () => {
    const id = "0b9c4f5e-7a1d-5e2b-a3c4-d5e6f7a8b9c0";
    const long = "extract.transform.load-".repeat(5);
    const names = [
      defaultExecutionName(id, long, 1),
      defaultExecutionName(id, long, 2),
      defaultExecutionName(id, "a.b", 1),
      defaultExecutionName(id, "a-b", 1),
      defaultExecutionName(id, `${long}x`, 1),
    ];
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    expect(names[0]).toHaveLength(80);
    expect(names[0]).toMatch(/-1$/);
    expect(names[1]).toMatch(/-2$/);
    expect(new Set(names).size).toBe(names.length);
    expect(defaultExecutionName(id, long, 1)).toBe(names[0]);
  });

  it("derives execution ARNs, also from version and alias ARNs", () => {
    expect(executionArnFor(SM, "x")).toBe(
      "arn:aws:states:us-east-1:123456789012:execution:orders:x",
    );
    expect(executionArnFor(`${SM}:prod`, "x")).toBe(executionArnFor(SM, "x"));
    expect(() => executionArnFor("arn:aws:lambda:us-east-1:1:function:f", "x")).toThrow();
  });

  it("waits 1 s, doubling up to pollIntervalSeconds", () => {
    expect([0, 1, 2, 3, 4].map((p) => pollDelayMs(p, 5))).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(pollDelayMs(100, 300)).toBe(300_000);
    expect(pollDelayMs(0, 1)).toBe(1000);
  });
});

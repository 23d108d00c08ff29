// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
/**
 * Validation of LAMBDA and STEP_FUNCTIONS task definitions: defaults, accepted forms, and the
 * 400 (413 for sizes) details at each field's path.
 */
import { describe, expect, it } from "vitest";
import { statusOf } from "../../lib/api/http.js";
import { type ErrorDetail, RequestError } from "../../lib/core/errors.js";
import {
  isLogicTaskType,
  isWorkerTaskType,
  type LambdaTaskDefinition,
  type StepFunctionsTaskDefinition,
  TASK_TYPES,
} from "../../lib/core/model.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

type Body = Record<string, unknown>;

const SM = "arn:aws:states:us-east-1:123456789012:stateMachine:orders";
const lambda = (extra: Body = {}): Body => ({
  code: "fn",
  type: "LAMBDA",
  functionName: "my-function",
  payload: "{}",
  ...extra,
});
const sfn = (extra: Body = {}): Body => ({
  code: "sm",
  type: "STEP_FUNCTIONS",
  stateMachineArn: SM,
  ...extra,
});

/** The error a one-task workflow raises (fails the test when it is accepted). */
function rejectionOf(task: Body): RequestError {
  try {
    parseWorkflowDefinition({ tasks: [task] });
  } catch (e) {
    expect(e).toBeInstanceOf(RequestError);
    return e as RequestError;
  }
  throw new Error(`expected ${JSON.stringify(task).slice(0, 200)} to be rejected`);
}

/** The message of the one detail at `tasks[0].<field>`, checking the status. */
function messageAt(task: Body, field: string, status = 400): string {
  const err = rejectionOf(task);
  expect(statusOf(err.code)).toBe(status);
  const found = err.details.filter((d: ErrorDetail) => d.path === `tasks[0].${field}`);
  expect(found, JSON.stringify(err.details)).toHaveLength(1);
  return found[0]?.message as string;
}

const accepted = (task: Body) => parseWorkflowDefinition({ tasks: [task] }).tasks[0];

describe("LAMBDA task definitions", () => {
  it("fill in defaults and keep what was given", () => {
    expect(accepted(lambda())).toMatchObject({
      type: "LAMBDA",
      functionName: "my-function",
      payload: "{}",
      outputs: {},
      retries: 0,
      timeoutStrategy: "FAIL",
      workerGroup: "default",
    });
    const t = accepted(lambda({ qualifier: "$LATEST", outputs: { id: "$.id" } }));
    expect((t as LambdaTaskDefinition).qualifier).toBe("$LATEST");
    expect((t as LambdaTaskDefinition).outputs).toEqual({ id: "$.id" });
  });

  it("accept names, name:alias, partial and full ARNs", () => {
    for (const functionName of [
      "my-function",
      "my_function.v2",
      "my-function:live",
      "123456789012:function:my-function",
      "arn:aws:lambda:us-west-2:123456789012:function:my-function",
      "arn:aws:lambda:us-west-2:123456789012:function:my-function:7",
      "arn:aws-cn:lambda:cn-north-1:123456789012:function:f:$LATEST",
      "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:f",
    ]) {
      expect(accepted(lambda({ functionName })), functionName).toMatchObject({ functionName });
    }
  });

  it("reject function names off AWS's pattern or over 170 characters", () => {
    for (const functionName of ["my function", "a/b", "fn:al:ias", "arn:aws:s3:::bucket", ""]) {
      expect(messageAt(lambda({ functionName }), "functionName"), functionName).toMatch(
        /function name|must not be empty/,
      );
    }
    // A length limit alone answers 413, as every size limit does (lib/core/validate.ts).
    expect(messageAt(lambda({ functionName: "f".repeat(171) }), "functionName", 413)).toBe(
      "must be at most 170 characters",
    );
  });

  it("reject a bad qualifier, unknown fields and bad output paths", () => {
    expect(messageAt(lambda({ qualifier: "v 1" }), "qualifier")).toMatch(/version or alias/);
    expect(messageAt(lambda({ qualifier: "" }), "qualifier")).toMatch(/version or alias/);
    expect(rejectionOf(lambda({ url: "http://x" })).details[0]?.message).toMatch(/url/);
    expect(messageAt(lambda({ outputs: { id: "$[?(@.x)]" } }), "outputs.id")).toMatch(
      /filter and script expressions are not supported/,
    );
  });

  it("require a payload that is JSON when it holds no parameter references", () => {
    const { payload: _p, ...withoutPayload } = lambda();
    expect(messageAt(withoutPayload, "payload")).toBe("is required");
    expect(messageAt(lambda({ payload: "" }), "payload")).toBe("must be JSON (empty text)");
    expect(messageAt(lambda({ payload: "{'a': 1}" }), "payload")).toMatch(/^must be JSON \(.+\)$/);
    // With references it can only be checked once substituted (at run time).
    expect(accepted(lambda({ payload: '{"n": ${n}, "d": "$[yyyyMMdd]"}' }))).toMatchObject({
      payload: '{"n": ${n}, "d": "$[yyyyMMdd]"}',
    });
  });

  it("answer 413 for a payload over 64 KiB as written", () => {
    const payload = JSON.stringify({ x: "y".repeat(64 * 1024) });
    expect(messageAt(lambda({ payload }), "payload", 413)).toBe("must be at most 65536 bytes");
  });
});

describe("STEP_FUNCTIONS task definitions", () => {
  it("fill in defaults and keep what was given", () => {
    expect(accepted(sfn())).toMatchObject({
      type: "STEP_FUNCTIONS",
      stateMachineArn: SM,
      pollIntervalSeconds: 5,
      outputs: {},
    });
    const t = accepted(
      sfn({
        stateMachineArn: `${SM}:prod`,
        input: '{"day": "${system.biz.date}"}',
        executionName: "daily-${system.biz.date}",
        pollIntervalSeconds: 300,
      }),
    ) as StepFunctionsTaskDefinition;
    expect(t.input).toBe('{"day": "${system.biz.date}"}');
    expect(t.executionName).toBe("daily-${system.biz.date}");
    expect(t.pollIntervalSeconds).toBe(300);
    expect(t.stateMachineArn).toBe(`${SM}:prod`);
  });

  it("reject what is not a state machine ARN", () => {
    for (const stateMachineArn of [
      "orders",
      "arn:aws:states:us-east-1:123456789012:execution:orders:x",
      "arn:aws:lambda:us-east-1:123456789012:function:orders",
      `${SM} `,
    ]) {
      expect(messageAt(sfn({ stateMachineArn }), "stateMachineArn"), stateMachineArn).toMatch(
        /must be a state machine ARN/,
      );
    }
  });

  it("hold pollIntervalSeconds to 1..300 whole seconds", () => {
    expect(messageAt(sfn({ pollIntervalSeconds: 0 }), "pollIntervalSeconds")).toBe("must be >= 1");
    expect(messageAt(sfn({ pollIntervalSeconds: 301 }), "pollIntervalSeconds")).toBe(
      "must be <= 300",
    );
    expect(messageAt(sfn({ pollIntervalSeconds: 1.5 }), "pollIntervalSeconds")).toMatch(
      /whole number/,
    );
  });

  it("reject execution names AWS would refuse", () => {
    expect(messageAt(sfn({ executionName: "a b" }), "executionName")).toMatch(
      /^must not contain " "/,
    );
    expect(messageAt(sfn({ executionName: "x:y" }), "executionName")).toMatch(
      /must not contain ":"/,
    );
    expect(messageAt(sfn({ executionName: "n".repeat(81) }), "executionName")).toBe(
      "must be 1 to 80 characters",
    );
    expect(messageAt(sfn({ executionName: "" }), "executionName")).toBe(
      "must be 1 to 80 characters",
    );
    // References are checked after substitution; the text around them is checked now.
    expect(messageAt(sfn({ executionName: "run #${n}" }), "executionName")).toMatch(
      /must not contain/,
    );
  });

  it("require an input that is JSON, at most 64 KiB as written", () => {
    expect(messageAt(sfn({ input: "[1," }), "input")).toMatch(/^must be JSON/);
    const input = JSON.stringify({ x: "y".repeat(64 * 1024) });
    expect(messageAt(sfn({ input }), "input", 413)).toBe("must be at most 65536 bytes");
  });
});

describe("task types", () => {
  it("name the new types in the message for an unknown type", () => {
    expect(messageAt({ code: "a", type: "GLUE" }, "type")).toBe(
      "type must be SHELL, HTTP, LAMBDA, STEP_FUNCTIONS, CONDITIONS, SWITCH, SUB_WORKFLOW or DEPENDENT",
    );
  });

  it("count LAMBDA and STEP_FUNCTIONS as worker task types", () => {
    expect(TASK_TYPES.filter(isWorkerTaskType)).toEqual([
      "SHELL",
      "HTTP",
      "LAMBDA",
      "STEP_FUNCTIONS",
    ]);
    for (const t of TASK_TYPES) expect(isWorkerTaskType(t)).toBe(!isLogicTaskType(t));
  });
});

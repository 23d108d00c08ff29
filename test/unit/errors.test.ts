/**
 * The error model (docs/architecture.md "Errors"): one base with `name`, `cause` and
 * `retryable`, one error per layer on it, and HTTP statuses assigned only at the API edge.
 */
import { describe, expect, it } from "vitest";
import { errorResult, statusOf } from "../../lib/api/http.js";
import { CliError, EXIT, UsageError } from "../../lib/cli/errors.js";
import { ApiError } from "../../lib/cli/http.js";
import {
  conflict,
  type ErrorCode,
  IllegalTransitionError,
  notFound,
  RequestError,
  ShoalError,
  validationError,
} from "../../lib/core/errors.js";
import { ParamError } from "../../lib/core/time-params.js";
import { RetryLater } from "../../lib/engine/errors.js";
import { NoConfigurationError } from "../../lib/standalone/worker-process.js";
import { AbortedError } from "../../lib/tasks/lambda.js";

describe("the base error", () => {
  it("names every error after its class, and says whether to try again", () => {
    const cases: [ShoalError, string, boolean][] = [
      [new RequestError("Conflict", "busy"), "RequestError", false],
      [
        new IllegalTransitionError("instance", "RUNNING", "SUBMITTED"),
        "IllegalTransitionError",
        false,
      ],
      [new ParamError("bad"), "ParamError", false],
      [new RetryLater(), "RetryLater", true],
      [new AbortedError("stop"), "AbortedError", false],
      [new NoConfigurationError("where is Shoal?"), "NoConfigurationError", false],
      [new CliError("no"), "CliError", false],
      [new UsageError("bad flag"), "UsageError", false],
      [new ApiError(409, "Conflict", "busy", []), "ApiError", false],
    ];
    for (const [err, name, retryable] of cases) {
      expect(err).toBeInstanceOf(ShoalError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe(name);
      expect(err.retryable, name).toBe(retryable);
      expect(String(err)).toBe(`${name}: ${err.message}`);
    }
  });

  it("keeps the error it wraps as `cause`, and has no `cause` without one", () => {
    const parse = new SyntaxError("Unexpected token");
    expect(new RetryLater("later", { cause: parse }).cause).toBe(parse);
    expect(new ParamError("parameter day: bad", { cause: parse }).cause).toBe(parse);
    expect(new UsageError("--pattern: not valid JSON", { cause: parse }).cause).toBe(parse);
    expect(validationError([{ path: "", message: "no" }], undefined, { cause: parse }).cause).toBe(
      parse,
    );
    expect(new AbortedError("shutdown").cause).toBe("shutdown");
    expect("cause" in new RetryLater()).toBe(false);
    expect("cause" in notFound("gone")).toBe(false);
  });

  it("keeps each layer's own fields", () => {
    expect(new CliError("no").exitCode).toBe(EXIT.error);
    expect(new CliError("no", { exitCode: 3 }).exitCode).toBe(3);
    expect(new UsageError("bad").exitCode).toBe(EXIT.usage);
    const api = new ApiError(404, "NotFound", "gone", []);
    expect([api.status, api.code, api.exitCode]).toEqual([404, "NotFound", EXIT.error]);
    expect(new ApiError(429, "TooManyRequests", "slow down", []).retryable).toBe(true);
    expect(new ApiError(503, "HTTP503", "unavailable", []).retryable).toBe(true);
    expect(new AbortedError("why").reason).toBe("why");
    const err = conflict("busy");
    expect([err.code, err.message, err.details]).toEqual(["Conflict", "busy", []]);
    expect(err).not.toHaveProperty("status");
  });
});

describe("HTTP statuses at the API edge", () => {
  it("maps each error code to its status", () => {
    const expected: Record<ErrorCode, number> = {
      ValidationError: 400,
      NotFound: 404,
      Conflict: 409,
      PayloadTooLarge: 413,
      UnsupportedMediaType: 415,
    };
    for (const [code, status] of Object.entries(expected)) {
      expect(statusOf(code as ErrorCode), code).toBe(status);
    }
  });

  it("answers a client-caused error with its code's status and the contract's body", () => {
    const detail = { path: "tasks[0].type", message: "is required" };
    expect(errorResult(validationError([detail]))).toEqual({
      statusCode: 400,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        error: {
          code: "ValidationError",
          message: "tasks[0].type: is required",
          details: [detail],
        },
      }),
    });
    expect(errorResult(new RequestError("PayloadTooLarge", "too large"))).toEqual({
      statusCode: 413,
      headers: { "content-type": "application/json" },
      body: '{"error":{"code":"PayloadTooLarge","message":"too large"}}',
    });
  });
});

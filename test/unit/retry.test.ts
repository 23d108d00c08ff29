import { describe, expect, it } from "vitest";
import { retryDelaySeconds, shouldRetry } from "../../lib/core/retry.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

describe("retry timing", () => {
  it("FIXED waits the same interval every time", () => {
    const p = { retries: 3, retryIntervalSeconds: 10 };
    expect([1, 2, 3].map((n) => retryDelaySeconds(p, n))).toEqual([10, 10, 10]);
  });

  it("EXPONENTIAL doubles the interval, capped by maxRetryIntervalSeconds", () => {
    const p = {
      retries: 6,
      retryIntervalSeconds: 5,
      retryBackoff: "EXPONENTIAL" as const,
      maxRetryIntervalSeconds: 60,
    };
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelaySeconds(p, n))).toEqual([5, 10, 20, 40, 60, 60]);
    const uncapped = { ...p, maxRetryIntervalSeconds: undefined };
    expect(retryDelaySeconds(uncapped, 4)).toBe(40);
  });

  it("counts retries, not failovers", () => {
    expect(shouldRetry({ retries: 2, retryIntervalSeconds: 0 }, 1)).toBe(true);
    expect(shouldRetry({ retries: 2, retryIntervalSeconds: 0 }, 2)).toBe(false);
  });

  it("validates the backoff fields and defaults to FIXED", () => {
    const def = parseWorkflowDefinition({ tasks: [{ code: "a", type: "SHELL", command: "true" }] });
    expect(def.tasks[0]?.retryBackoff).toBe("FIXED");
    expect(() =>
      parseWorkflowDefinition({
        tasks: [{ code: "a", type: "SHELL", command: "true", retryBackoff: "LINEAR" }],
      }),
    ).toThrow(/retryBackoff: must be FIXED or EXPONENTIAL/);
    expect(() =>
      parseWorkflowDefinition({
        tasks: [{ code: "a", type: "SHELL", command: "true", maxRetryIntervalSeconds: 604_801 }],
      }),
    ).toThrow(/maxRetryIntervalSeconds: must be <= 604800/);
  });
});

import { describe, expect, it } from "vitest";
import { currentAttemptCandidates, currentAttempts } from "../../lib/core/current-attempts.js";
import type { Progress } from "../../lib/core/progress.js";

const p = (slots: string, attempts: Progress["attempts"] = {}): Progress => ({ slots, attempts });
const t = (code: string, attempt: number, state = "SUCCESS") => ({ code, attempt, state });

describe("currentAttemptCandidates", () => {
  it("a waiting or out-of-scope task has not started in this round", () => {
    expect(currentAttemptCandidates(p("-"), 0)).toEqual([]);
    expect(currentAttemptCandidates(p("-", { 0: [2, 0, 0] }), 0)).toEqual([]); // rerun, not reached
    expect(currentAttemptCandidates(p("."), 0)).toEqual([]);
    expect(currentAttemptCandidates(p("S"), 3)).toEqual([]); // no such task
  });

  it("an active or finished task is its counted attempt", () => {
    expect(currentAttemptCandidates(p("D"), 0)).toEqual([1]);
    expect(currentAttemptCandidates(p("F", { 0: [3, 2, 0] }), 0)).toEqual([3]);
    expect(currentAttemptCandidates(p("s", { 0: [2, 0, 0] }), 0)).toEqual([2]);
  });

  it("a paused task is the attempt the pause ended, or (a logic task) the one it resumes", () => {
    expect(currentAttemptCandidates(p("P", { 0: [2, 0, 0] }), 0)).toEqual([2, 1]);
    expect(currentAttemptCandidates(p("P"), 0)).toEqual([1]);
  });
});

describe("currentAttempts", () => {
  const codes = ["a", "b", "c"];
  it("shows each task's attempt of the current round only", () => {
    // A rerun: a is running again (attempt 2), b and c wait; their attempts 1 are history.
    const progress = p("D--", { 0: [2, 0, 0], 1: [2, 0, 0], 2: [2, 0, 0] });
    const all = [t("a", 1), t("b", 1), t("c", 1), t("a", 2, "RUNNING")];
    expect(currentAttempts(progress, codes, all)).toEqual([t("a", 2, "RUNNING")]);
  });

  it("keeps what recover-failed kept from an earlier round", () => {
    const progress = p("SD-", { 1: [2, 0, 0] });
    const all = [t("a", 1), t("b", 1, "FAILURE"), t("b", 2, "DISPATCHED")];
    expect(currentAttempts(progress, codes, all)).toEqual([t("a", 1), t("b", 2, "DISPATCHED")]);
  });

  it("a paused worker task shows its PAUSED attempt, not the one a resume will start", () => {
    const progress = p("PS-", { 0: [2, 0, 0] });
    const all = [t("a", 1, "PAUSED"), t("b", 1)];
    expect(currentAttempts(progress, codes, all)).toEqual([t("a", 1, "PAUSED"), t("b", 1)]);
  });
});

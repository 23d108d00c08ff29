/**
 * Explain's answers for tasks the dispatcher has not started in this round (slot WAITING) and
 * for skipped ones: which upstream task they wait for, or which failure or branch decision means
 * they will not run (lib/core/progress.ts decides readiness; this says it back).
 */
import { skipCause } from "./branches.js";
import {
  currentAttempt,
  type Decision,
  type ExplainAttempt,
  type ExplainFacts,
  listed,
} from "./explain-facts.js";
import { FINISHED, SATISFIED, SLOT } from "./progress.js";

/** Failed for good: a downstream task (other than CONDITIONS) never runs in this round. */
const FAILED = new Set<string>([SLOT.FAILURE, SLOT.KILLED, SLOT.HANDLED]);

/** A task failed for good that blocks a waiting task, possibly through other waiting tasks. */
export interface Blocker {
  /** The failed task. */
  code: string;
  state: string;
  /** The waiting upstream task through which it blocks (absent: a direct upstream). */
  through?: string;
}

function slotState(f: ExplainFacts, i: number, byKey: Map<string, ExplainAttempt>): string {
  const a = currentAttempt(f, i, byKey);
  if (a) return a.state;
  const s = f.instance.progress.slots[i];
  if (s === SLOT.KILLED) return "KILLED";
  if (s === SLOT.WAITING) return "NOT_STARTED";
  if (s === SLOT.PAUSED) return "PAUSED";
  if (s === SLOT.ACTIVE) return "SUBMITTED";
  return s === SLOT.SUCCESS ? "SUCCESS" : "FAILURE";
}

/**
 * The failure that keeps waiting task `index` from ever running in this round, if any: a direct
 * upstream failed for good, or a waiting upstream is itself blocked. Iterative (a DAG may be
 * 10,000 tasks deep), memoised across calls through `memo`. Which task blocks depends on the
 * slots only; `byKey` gives its state (else the slot's).
 */
export function blockerOf(
  f: ExplainFacts,
  index: number,
  byKey: Map<string, ExplainAttempt>,
  memo: Map<number, Blocker | null>,
): Blocker | undefined {
  const slots = f.instance.progress.slots;
  const stack = [index];
  while (stack.length > 0) {
    const i = stack[stack.length - 1] as number;
    if (memo.has(i)) {
      stack.pop();
      continue;
    }
    const ups = f.upstream[i] ?? [];
    const conditions = f.tasks[i]?.type === "CONDITIONS";
    const failed = conditions ? undefined : ups.find((u) => FAILED.has(slots[u] as string));
    if (failed !== undefined) {
      memo.set(i, { code: f.tasks[failed]?.code ?? "?", state: slotState(f, failed, byKey) });
      stack.pop();
      continue;
    }
    const waiting = ups.filter((u) => slots[u] === SLOT.WAITING);
    const unknown = waiting.filter((u) => !memo.has(u));
    if (unknown.length > 0) {
      stack.push(...unknown);
      continue;
    }
    const via = waiting.find((u) => memo.get(u));
    const b = via !== undefined ? (memo.get(via) as Blocker) : undefined;
    memo.set(i, b ? { code: b.code, state: b.state, through: f.tasks[via as number]?.code } : null);
    stack.pop();
  }
  return memo.get(index) ?? undefined;
}

/**
 * Why a task the dispatcher has not started waits.
 * @param hold what holds the whole instance (lib/core/explain.ts instanceHold), if anything.
 */
export function waitingMessage(
  f: ExplainFacts,
  index: number,
  hold: Decision | undefined,
  byKey: Map<string, ExplainAttempt>,
  memo: Map<number, Blocker | null> = new Map(),
): Decision {
  const blocker = blockerOf(f, index, byKey, memo);
  if (hold && hold.reason !== "INSTANCE_ENDED") return hold;
  if (blocker) {
    const cause = blocker.through
      ? `upstream '${blocker.through}' cannot run (its upstream '${blocker.code}' ended ${blocker.state})`
      : `upstream '${blocker.code}' ended ${blocker.state}`;
    return {
      reason: "UPSTREAM_FAILED",
      message: `${hold ? "did not run" : "will not run in this round"}: ${cause}`,
      facts: {
        failedUpstream: { code: blocker.code, state: blocker.state },
        ...(blocker.through ? { through: blocker.through } : {}),
        ...(hold ? hold.facts : {}),
      },
    };
  }
  if (hold) {
    return { ...hold, message: `did not run: ${hold.message} before it started` };
  }
  const slots = f.instance.progress.slots;
  const conditions = f.tasks[index]?.type === "CONDITIONS";
  const ok = conditions ? FINISHED : SATISFIED;
  const pending = (f.upstream[index] ?? []).filter((u) => !ok.has(slots[u] as string));
  if (pending.length > 0) {
    const upstream = pending.map((u) => {
      const a = currentAttempt(f, u, byKey);
      const state = slotState(f, u, byKey);
      return { code: f.tasks[u]?.code ?? "?", state, ...(a ? { attempt: a.attempt } : {}) };
    });
    const said = upstream.map((u) => {
      const what =
        u.state === "NOT_STARTED"
          ? "not started"
          : `${u.state}${u.attempt ? `, attempt ${u.attempt}` : ""}`;
      return `'${u.code}' (${what})`;
    });
    return {
      reason: "WAITING_FOR_UPSTREAM",
      message: `waiting for upstream ${listed(said)}`,
      facts: { upstream },
    };
  }
  if (f.instance.failureStrategy === "END") {
    const failed = [...slots].findIndex((s) => s === SLOT.FAILURE || s === SLOT.KILLED);
    if (failed >= 0) {
      const code = f.tasks[failed]?.code ?? "?";
      return {
        reason: "FAILURE_STRATEGY_END",
        message: `will not start: task '${code}' failed and the failure strategy is END`,
        facts: { failedTask: code, failureStrategy: "END" },
      };
    }
  }
  return {
    reason: "NOT_STARTED",
    message: "ready: the dispatcher has not started it in this round yet",
    facts: {},
  };
}

/** Why a SKIPPED task was skipped: the branch decision that did not take it. */
export function skippedMessage(
  f: ExplainFacts,
  index: number,
  byKey: Map<string, ExplainAttempt>,
): Decision {
  const cause = skipCause(f.tasks, f.upstream, f.instance.progress.slots, index);
  if (!cause) {
    return { reason: "SKIPPED_BY_BRANCH", message: "skipped by a branch decision", facts: {} };
  }
  const deciderIndex = f.tasks.findIndex((t) => t.code === cause.by);
  const taken = currentAttempt(f, deciderIndex, byKey)?.branch;
  const tookText = taken && taken.length > 0 ? ` (it took ${taken.join(", ")})` : "";
  const message =
    cause.via.length === 0
      ? `skipped: branch not taken by ${cause.by}${tookText}`
      : `skipped: its upstream '${cause.via[0]}' was skipped, a branch not taken by ${cause.by}${tookText}`;
  return {
    reason: "SKIPPED_BY_BRANCH",
    message,
    facts: {
      skippedBy: cause.by,
      byType: cause.byType,
      ...(taken ? { branchTaken: taken } : {}),
      ...(cause.via.length > 0 ? { via: cause.via } : {}),
    },
  };
}

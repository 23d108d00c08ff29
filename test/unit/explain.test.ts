/**
 * `shoal explain`'s decisions (lib/core/explain.ts), one reason at a time, from hand-built facts:
 * the progress slots, task instance records, task-group state, heartbeats and queue depths.
 */
import { describe, expect, it } from "vitest";
import { Dag } from "../../lib/core/dag.js";
import {
  ECS_SCALE_OUT_LATE_MS,
  type ExplainAttempt,
  type ExplainFacts,
  explainInstance,
  explainReads,
  explainTask,
  instanceHold,
  neededFacts,
  type WorkerBeatFacts,
} from "../../lib/core/explain.js";
import type { InstanceState, Priority } from "../../lib/core/model.js";
import type { Progress } from "../../lib/core/progress.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

const NOW = Date.parse("2026-11-21T05:00:00.000Z");
const T0 = NOW - 60_000;
const at = (ms: number) => new Date(ms).toISOString();

/** Facts for `tasks` (a workflow body's task list) in the state `slots`. */
function facts(
  tasks: unknown[],
  slots: string,
  more: Partial<Omit<ExplainFacts, "instance" | "attempts">> & {
    state?: InstanceState | undefined;
    priority?: Priority;
    /** Progress attempt counters: task index → [attempt, retries used, failovers]. */
    counters?: Record<string, [number, number, number?]>;
    failureStrategy?: "END" | "CONTINUE";
    startTasks?: string[];
    timedOutAt?: number;
  } = {},
): ExplainFacts {
  const def = parseWorkflowDefinition({ tasks });
  const progress: Progress = { slots, attempts: more.counters ?? {} };
  const { state, priority, failureStrategy, startTasks, timedOutAt, counters: _c, ...rest } = more;
  return {
    now: NOW,
    tasks: def.tasks,
    upstream: new Dag(def.tasks).upstream,
    attempts: [],
    ...rest,
    instance: {
      instanceId: "i-1",
      ...("state" in more ? (state ? { state } : {}) : { state: "RUNNING" as const }),
      priority: priority ?? "MEDIUM",
      failureStrategy: failureStrategy ?? "CONTINUE",
      progress,
      ...(startTasks ? { startTasks, taskScope: "ONLY" as const } : {}),
      ...(timedOutAt !== undefined ? { timedOutAt } : {}),
    },
  };
}

const attempt = (
  code: string,
  n: number,
  state: ExplainAttempt["state"],
  extra: Partial<ExplainAttempt> = {},
): ExplainAttempt => ({
  code,
  attempt: n,
  state,
  workerGroup: "default",
  submittedAt: T0,
  ...extra,
});

const shell = (code: string, upstream: string[] = [], extra: Record<string, unknown> = {}) => ({
  code,
  type: "SHELL",
  command: "true",
  upstream,
  ...extra,
});

const ETL = [shell("extract"), shell("load", ["extract"]), shell("report", ["load"])];

const explain = (f: ExplainFacts, code: string) =>
  explainTask(
    f,
    f.tasks.findIndex((t) => t.code === code),
  );

describe("waiting for upstream tasks", () => {
  it("names the upstream task that is not done, with its state and attempt", () => {
    const f = facts(ETL, "SD-", {
      counters: { 1: [2, 1, 0] },
      // attempt 1 of load failed and was retried: attempt 2 runs
    });
    f.attempts = [
      attempt("extract", 1, "SUCCESS"),
      attempt("load", 1, "FAILURE"),
      attempt("load", 2, "RUNNING", { worker: "w1", startedAt: T0 }),
    ];
    expect(explain(f, "report")).toMatchObject({
      code: "report",
      state: "NOT_STARTED",
      reason: "WAITING_FOR_UPSTREAM",
      message: "waiting for upstream 'load' (RUNNING, attempt 2)",
      facts: { upstream: [{ code: "load", state: "RUNNING", attempt: 2 }] },
    });
  });

  it("lists several upstream tasks, not started ones as such", () => {
    const f = facts([shell("a"), shell("b"), shell("c", ["a", "b"])], "D--");
    f.attempts = [attempt("a", 1, "DISPATCHED")];
    expect(explain(f, "c").message).toBe(
      "waiting for upstream 'a' (DISPATCHED, attempt 1) and 'b' (not started)",
    );
  });

  it("says a task will not run when an upstream failed for good, also through waiting tasks", () => {
    const f = facts(ETL, "F--");
    f.attempts = [attempt("extract", 1, "FAILURE", { error: "exit 1" })];
    expect(explain(f, "load")).toMatchObject({
      reason: "UPSTREAM_FAILED",
      message: "will not run in this round: upstream 'extract' ended FAILURE",
    });
    expect(explain(f, "report")).toMatchObject({
      reason: "UPSTREAM_FAILED",
      message:
        "will not run in this round: upstream 'load' cannot run (its upstream 'extract' ended FAILURE)",
      facts: { failedUpstream: { code: "extract", state: "FAILURE" }, through: "load" },
    });
  });

  it("a CONDITIONS task waits for finished upstream tasks, failed ones included", () => {
    const tasks = [
      shell("a"),
      {
        code: "cond",
        type: "CONDITIONS",
        upstream: ["a"],
        successNext: ["ok"],
        failedNext: ["ko"],
      },
      shell("ok", ["cond"]),
      shell("ko", ["cond"]),
    ];
    const f = facts(tasks, "h---");
    expect(explain(f, "cond").reason).toBe("NOT_STARTED");
    expect(explain(facts(tasks, "D---"), "cond").message).toBe(
      "waiting for upstream 'a' (SUBMITTED)",
    );
  });

  it("under END, nothing new starts once a task failed", () => {
    const f = facts([shell("a"), shell("b")], "F-", { failureStrategy: "END" });
    expect(explain(f, "b")).toMatchObject({
      reason: "FAILURE_STRATEGY_END",
      message: "will not start: task 'a' failed and the failure strategy is END",
    });
  });

  it("a task of a finished instance did not run, and says why", () => {
    const f = facts([shell("a"), shell("b")], "F-", { state: "FAILURE" });
    expect(explain(f, "b")).toMatchObject({
      reason: "INSTANCE_ENDED",
      message: "did not run: the instance ended FAILURE before it started",
    });
    expect(explain(facts(ETL, "F--", { state: "FAILURE" }), "load").message).toBe(
      "did not run: upstream 'extract' ended FAILURE",
    );
  });
});

describe("task groups", () => {
  const tasks = [shell("load", [], { taskGroup: "db" })];

  it("says the group is full, with used/capacity and the task's place in the queue", () => {
    const f = facts(tasks, "D");
    f.attempts = [attempt("load", 1, "SUBMITTED", { taskGroup: "db" })];
    f.taskGroups = { db: { capacity: 2, used: 2, waiting: 5, positions: { "load#1": 3 } } };
    expect(explain(f, "load")).toMatchObject({
      state: "SUBMITTED",
      reason: "TASK_GROUP_FULL",
      message: "task group 'db' is full (2/2 slots used): position 3 of 5 waiting",
      facts: { taskGroup: { name: "db", capacity: 2, used: 2, waiting: 5, position: 3 } },
    });
  });

  it("says a slot is being granted when the group has room", () => {
    const f = facts(tasks, "D");
    f.attempts = [attempt("load", 1, "SUBMITTED", { taskGroup: "db" })];
    f.taskGroups = { db: { capacity: 2, used: 1, waiting: 1, positions: { "load#1": 1 } } };
    expect(explain(f, "load").message).toBe(
      "waiting for a slot of task group 'db' (1/2 used, being granted): position 1 of 1 waiting",
    );
  });

  it("names a missing group", () => {
    const f = facts(tasks, "D");
    f.attempts = [attempt("load", 1, "SUBMITTED", { taskGroup: "db" })];
    f.taskGroups = { db: { used: 0, waiting: 1, positions: {} } };
    expect(explain(f, "load").message).toMatch(/task group 'db', which does not exist/);
  });
});

describe("queued for a worker", () => {
  const gpu = [shell("train", [], { workerGroup: "gpu" })];
  const queuedFacts = (
    extra: Partial<Omit<ExplainFacts, "instance" | "attempts">> = {},
    priority: Priority = "MEDIUM",
  ) => {
    const f = facts(gpu, "D", { priority, ...extra });
    f.attempts = [attempt("train", 1, "DISPATCHED", { workerGroup: "gpu" })];
    return f;
  };

  it("no worker ever polled the group", () => {
    const f = queuedFacts({ workerGroups: { gpu: { queued: { MEDIUM: 1 } } } });
    expect(explain(f, "train")).toMatchObject({
      state: "DISPATCHED",
      reason: "NO_WORKER",
      message:
        "no worker has polled worker group 'gpu' in the last 120 s: start one with shoal worker --group gpu",
      facts: { workerGroup: "gpu", servedBy: "workers", silenceSeconds: 120 },
    });
  });

  it("the last poll is older than the silence threshold", () => {
    const last = NOW - 10 * 60_000;
    const f = queuedFacts({
      workerGroups: { gpu: { heartbeat: { lastPollAt: last, worker: "h:1:ab" } } },
    });
    expect(explain(f, "train")).toMatchObject({
      reason: "NO_WORKER",
      message: `no worker has polled worker group 'gpu' in the last 120 s (last poll at ${at(last)} by h:1:ab): start one with shoal worker --group gpu`,
      facts: { lastPollAt: at(last), lastWorker: "h:1:ab" },
    });
  });

  it("the group has no task queues at all (AWS: not declared in the stack)", () => {
    const f = queuedFacts({ workerGroups: { gpu: { queued: "missing" } } });
    expect(explain(f, "train")).toMatchObject({
      reason: "NO_WORKER",
      facts: { queues: "missing" },
    });
    expect(explain(f, "train").message).toMatch(
      /^no worker has polled worker group 'gpu' in the last 120 s: the group has no task queues/,
    );
  });

  it("queued behind higher-priority tiers, approximately", () => {
    const f = queuedFacts(
      {
        workerGroups: {
          gpu: {
            heartbeat: { lastPollAt: NOW - 5_000, worker: "w" },
            queued: { HIGHEST: 2, HIGH: 3, MEDIUM: 4, LOW: 7, LOWEST: 0 },
          },
        },
      },
      "LOW",
    );
    expect(explain(f, "train")).toMatchObject({
      reason: "QUEUED_BEHIND_HIGHER_PRIORITY",
      message: "queued behind approximately 9 higher-priority tasks in worker group 'gpu'",
      facts: { higherPriorityQueued: 9, tier: "LOW" },
    });
  });

  it("queued at its own priority with a live worker", () => {
    const f = queuedFacts({
      workerGroups: {
        gpu: { heartbeat: { lastPollAt: NOW - 5_000, worker: "w" }, queued: { MEDIUM: 1 } },
      },
    });
    expect(explain(f, "train")).toMatchObject({
      reason: "QUEUED",
      message:
        "queued for a worker of group 'gpu': approximately 1 task wait at its priority (MEDIUM)",
    });
  });

  it("a Lambda-served group needs no heartbeat", () => {
    const f = queuedFacts({ workerGroups: { gpu: { lambda: true, queued: { MEDIUM: 2 } } } });
    expect(explain(f, "train")).toMatchObject({
      reason: "QUEUED",
      message:
        "queued for the Lambda worker of group 'gpu': approximately 2 tasks wait at its priority (MEDIUM)",
      facts: { servedBy: "lambda" },
    });
  });

  it("without a heartbeat store it does not claim there is no worker", () => {
    const f = queuedFacts({ workerGroups: { gpu: { heartbeatsUnknown: true } } });
    expect(explain(f, "train").reason).toBe("QUEUED");
  });

  it("neededFacts asks for the worker group of queued tasks only", () => {
    const f = queuedFacts();
    expect([...neededFacts(f).workerGroups]).toEqual(["gpu"]);
    f.attempts = [attempt("train", 1, "RUNNING", { workerGroup: "gpu" })];
    expect([...neededFacts(f).workerGroups]).toEqual([]);
  });
});

describe("busy workers, messages in flight, ECS groups", () => {
  const six = Array.from({ length: 6 }, (_, i) => shell(`t${i + 1}`));
  /** Six parallel tasks on one 4-slot worker: t1..t4 run, t5 and t6 DISPATCHED. */
  const sixOnFour = (beat: Partial<WorkerBeatFacts>, queued = 0, inFlight = 6) => {
    const f = facts(six, "DDDDDD");
    f.attempts = six.map((t, i) =>
      i < 4
        ? attempt(t.code, 1, "RUNNING", { worker: "w1", startedAt: T0 })
        : attempt(t.code, 1, "DISPATCHED"),
    );
    f.workerGroups = {
      default: {
        heartbeat: {
          lastPollAt: NOW - 30_000,
          worker: "w1",
          workers: [{ worker: "w1", at: NOW - 30_000, used: 4, slots: 4, held: 2, ...beat }],
        },
        queued: { MEDIUM: queued },
        inFlight: { MEDIUM: inFlight },
      },
    };
    return f;
  };

  it("a task whose message a busy worker holds: received, waiting for a free slot", () => {
    expect(explain(sixOnFour({}), "t5")).toMatchObject({
      state: "DISPATCHED",
      reason: "WORKERS_BUSY",
      message:
        "received by a worker of group 'default', waiting for a free slot: all 4 slots of worker w1 are busy",
      facts: {
        workerGroup: "default",
        servedBy: "workers",
        workers: [{ worker: "w1", used: 4, slots: 4, held: 2, at: at(NOW - 30_000) }],
        queued: { MEDIUM: 0 },
        inFlight: { MEDIUM: 6 },
      },
    });
  });

  it("a task still in the queue behind a busy worker: busy, never 'no worker'", () => {
    // The repro: a busy worker stops receiving, but its heartbeat (a timer) stays fresh.
    expect(explain(sixOnFour({}, 3, 4), "t6")).toMatchObject({
      reason: "WORKERS_BUSY",
      message: "all 4 slots of worker w1 are busy: it waits in the queue for a free slot",
    });
  });

  it("several busy workers are counted together; higher-priority tasks ahead are said", () => {
    const f = sixOnFour({}, 1, 0);
    const g = f.workerGroups?.default;
    const beats = [
      { worker: "w1", at: NOW - 10_000, used: 4, slots: 4, held: 0 },
      { worker: "w2", at: NOW - 50_000, used: 2, slots: 2, held: 0 },
      { worker: "gone", at: NOW - 10 * 60_000, used: 0, slots: 8, held: 0 },
    ];
    f.workerGroups = {
      default: {
        ...g,
        heartbeat: { lastPollAt: NOW - 10_000, worker: "w1", workers: beats },
        queued: { HIGH: 2, MEDIUM: 1 },
      },
    };
    expect(explain(f, "t5")).toMatchObject({
      reason: "WORKERS_BUSY",
      message:
        "all 6 slots of the 2 workers of group 'default' are busy: it waits in the queue for a free slot, behind approximately 2 higher-priority tasks",
    });
  });

  it("a free slot at the last heartbeat and the message in flight: received, not 'approximately 0'", () => {
    expect(explain(sixOnFour({ used: 3 }), "t5")).toMatchObject({
      reason: "QUEUED",
      message: "received by a worker of group 'default', waiting for a free slot",
    });
  });

  it("no count is said when the queue shows none", () => {
    const f = sixOnFour({ used: 0 }, 0, 0);
    expect(explain(f, "t5")).toMatchObject({
      reason: "QUEUED",
      message: "queued for a worker of group 'default'",
    });
  });

  it("an ECS group with no worker: the queued task scales the service out, then it is late", () => {
    const f = facts([shell("big", [], { workerGroup: "ecs" })], "D");
    f.attempts = [
      attempt("big", 1, "DISPATCHED", { workerGroup: "ecs", submittedAt: NOW - 60_000 }),
    ];
    f.workerGroups = { ecs: { ecs: true, queued: { MEDIUM: 1 } } };
    const e = explain(f, "big");
    expect(e).toMatchObject({ reason: "NO_WORKER", facts: { servedBy: "ecs" } });
    expect(e.message).toBe(
      "worker group 'ecs' is served by ECS, which runs no worker now (scaled to 0 while idle): the queued task makes it start one, within a few minutes (a one-minute queue-depth alarm, then the container's start)",
    );
    expect(e.message).not.toMatch(/shoal worker/);
    f.attempts = [
      attempt("big", 1, "DISPATCHED", {
        workerGroup: "ecs",
        submittedAt: NOW - ECS_SCALE_OUT_LATE_MS - 1,
      }),
    ];
    expect(explain(f, "big").message).toMatch(
      /^no ECS worker of group 'ecs' has polled in the last 120 s although the task has been queued since .*: the service did not scale out/,
    );
  });

  it("a worker with an old-style heartbeat (no per-worker entry) still counts as live", () => {
    const f = sixOnFour({});
    f.workerGroups = {
      default: { heartbeat: { lastPollAt: NOW - 5_000, worker: "w1" }, queued: { MEDIUM: 2 } },
    };
    expect(explain(f, "t5").reason).toBe("QUEUED");
  });
});

describe("explainReads: the attempts one task's explanation needs", () => {
  it("the task and its upstream tasks, the failure that blocks it, the branch that skipped it", () => {
    const tasks = [
      shell("a"),
      shell("b", ["a"]),
      shell("c", ["b"]),
      shell("d"),
      { code: "sw", type: "SWITCH", cases: [{ condition: "true", next: "x" }], defaultNext: "y" },
      shell("x", ["sw"]),
      shell("y", ["sw"]),
      shell("z", ["y"]),
    ];
    const f = facts(tasks, "F--SSSss");
    const codes = (code: string) =>
      [
        ...explainReads(
          f,
          f.tasks.findIndex((t) => t.code === code),
        ),
      ]
        .map((i) => f.tasks[i]?.code)
        .sort();
    expect(codes("c")).toEqual(["a", "b", "c"]);
    expect(codes("d")).toEqual(["d"]);
    expect(codes("z")).toEqual(["sw", "y", "z"]);
  });
});

describe("retries", () => {
  const tasks = [shell("load", [], { retries: 3, retryIntervalSeconds: 30 })];

  it("a delayed retry waits SUBMITTED until its stored due time", () => {
    const due = NOW + 20_000;
    const f = facts(tasks, "D", { counters: { 0: [2, 1, 0] } });
    f.attempts = [attempt("load", 1, "FAILURE"), attempt("load", 2, "SUBMITTED", { dueAt: due })];
    expect(explain(f, "load")).toMatchObject({
      state: "SUBMITTED",
      attempt: 2,
      reason: "RETRY_DUE",
      // The attempt is the explanation's own field: the sentence does not repeat it.
      message: `retry due at ${at(due)}`,
      facts: { dueAt: at(due) },
    });
  });

  it("derives the due time from the retry policy when the record has none", () => {
    const f = facts(tasks, "D", { counters: { 0: [2, 1, 0] } });
    f.attempts = [attempt("load", 2, "SUBMITTED", { submittedAt: NOW - 10_000 })];
    expect(explain(f, "load").message).toBe(`retry due at ${at(NOW + 20_000)}`);
  });

  it("a retry past its due time is queued like any task", () => {
    const f = facts(tasks, "D", { counters: { 0: [2, 1, 0] } });
    f.attempts = [attempt("load", 2, "SUBMITTED", { dueAt: NOW - 1 })];
    f.workerGroups = { default: {} };
    expect(explain(f, "load").reason).toBe("NO_WORKER");
  });
});

describe("the instance", () => {
  it("not before a scheduled run's time", () => {
    const f = facts(ETL, "---", {
      state: undefined,
      pendingCommand: { type: "SCHEDULED", createdAt: T0, notBefore: NOW + 30_000 },
    });
    expect(explain(f, "extract")).toMatchObject({
      reason: "NOT_BEFORE",
      message: `not before ${at(NOW + 30_000)}: a scheduled run signalled ahead of its nominal time starts then`,
    });
  });

  it("a start command the dispatcher has not taken yet", () => {
    const f = facts(ETL, "---", {
      state: undefined,
      pendingCommand: { type: "START_WORKFLOW", createdAt: T0 },
    });
    expect(explain(f, "report").reason).toBe("INSTANCE_STARTING");
  });

  it("paused, pausing and stopping hold tasks that have not started", () => {
    expect(explain(facts(ETL, "SP-", { state: "PAUSED" }), "load")).toMatchObject({
      reason: "INSTANCE_PAUSED",
      message: "the instance is PAUSED: nothing starts until it is resumed (shoal resume i-1)",
    });
    const pausing = facts(ETL, "SD-", { state: "PAUSING" });
    pausing.attempts = [attempt("load", 1, "DISPATCHED")];
    expect(explain(pausing, "load").reason).toBe("INSTANCE_PAUSING");
    expect(explain(facts(ETL, "S--", { state: "STOPPING" }), "load").message).toBe(
      "the instance is stopping: nothing new starts",
    );
  });

  it("a workflow timeout stops new work", () => {
    const f = facts(ETL, "S--", { timedOutAt: NOW - 1_000 });
    expect(explain(f, "load").reason).toBe("INSTANCE_TIMED_OUT");
  });

  it("a rerun not yet carried out: this round has not started", () => {
    const f = facts(ETL, "SSS", {
      state: "SUCCESS",
      pendingCommand: { type: "RERUN", createdAt: NOW - 2_000 },
    });
    f.attempts = ETL.map((t) => attempt(t.code, 1, "SUCCESS"));
    expect(explain(f, "extract")).toMatchObject({
      reason: "COMMAND_PENDING",
      message: `a RERUN of the instance, sent at ${at(NOW - 2_000)}, waits for the dispatcher: this round has not started yet`,
    });
    expect(instanceHold(f)?.reason).toBe("COMMAND_PENDING");
  });

  it("tasks outside a run's start-task scope", () => {
    const f = facts(ETL, ".D.", { startTasks: ["load"] });
    expect(explain(f, "report")).toMatchObject({
      state: "NOT_IN_SCOPE",
      reason: "NOT_IN_SCOPE",
      message: "not in this run's scope: the run started from 'load' (scope ONLY)",
    });
  });
});

describe("branches and logic tasks", () => {
  const SWITCH = [
    shell("count"),
    {
      code: "switch_1",
      type: "SWITCH",
      upstream: ["count"],
      cases: [{ condition: "rows > 100", next: "big_load" }],
      defaultNext: "small_load",
    },
    shell("big_load", ["switch_1"]),
    shell("small_load", ["switch_1"]),
    shell("small_report", ["small_load"]),
  ];

  it("a skipped task names the branch decision, also through skipped upstream tasks", () => {
    const f = facts(SWITCH, "SSDss");
    f.attempts = [attempt("switch_1", 1, "SUCCESS", { branch: ["big_load"] })];
    expect(explain(f, "small_load")).toMatchObject({
      reason: "SKIPPED_BY_BRANCH",
      message: "skipped: branch not taken by switch_1 (it took big_load)",
      facts: { skippedBy: "switch_1", byType: "SWITCH", branchTaken: ["big_load"] },
    });
    expect(explain(f, "small_report").message).toBe(
      "skipped: its upstream 'small_load' was skipped, a branch not taken by switch_1 (it took big_load)",
    );
  });

  it("a SUB_WORKFLOW waits for its child instance", () => {
    const f = facts([{ code: "child", type: "SUB_WORKFLOW", workflow: "etl" }], "D");
    f.attempts = [attempt("child", 1, "RUNNING", { subInstanceId: "c-1" })];
    f.children = { child: { state: "RUNNING" } };
    expect(explain(f, "child")).toMatchObject({
      reason: "WAITING_FOR_SUB_WORKFLOW",
      message: "SUB_WORKFLOW waiting for its child instance c-1 (RUNNING)",
      facts: { subInstanceId: "c-1", childState: "RUNNING", workflow: "etl" },
    });
    expect(neededFacts(f).children.get("child")).toBe("c-1");
  });

  it("a DEPENDENT task names the items it still waits for", () => {
    const dep = {
      code: "wait_daily",
      type: "DEPENDENT",
      dependence: {
        relation: "AND",
        groups: [
          {
            relation: "AND",
            items: [
              { workflow: "daily", cycle: "day", dateValue: "today" },
              { workflow: "hourly", task: "load", cycle: "hour", dateValue: "currentHour" },
            ],
          },
        ],
      },
    };
    const f = facts([dep], "D");
    f.attempts = [attempt("wait_daily", 1, "RUNNING")];
    f.dependents = {
      wait_daily: [
        { workflow: "daily", cycle: "day", dateValue: "today", result: "SUCCESS" },
        {
          workflow: "hourly",
          task: "load",
          cycle: "hour",
          dateValue: "currentHour",
          result: "WAITING",
        },
      ],
    };
    const e = explain(f, "wait_daily");
    expect(e.reason).toBe("WAITING_FOR_DEPENDENCY");
    expect(e.message).toMatch(
      /^DEPENDENT waiting for workflow 'hourly' task 'load' \(hour currentHour\); checked every \d+ s$/,
    );
  });
});

describe("explainInstance", () => {
  it("lists the tasks that wait, not the running, finished or out-of-scope ones", () => {
    const f = facts(
      [
        shell("a"),
        shell("b"),
        shell("c", ["a"]),
        shell("d"),
        shell("e", [], { workerGroup: "gpu" }),
      ],
      "SD-.D",
    );
    f.attempts = [
      attempt("a", 1, "SUCCESS"),
      attempt("b", 1, "RUNNING", { worker: "w" }),
      attempt("e", 1, "DISPATCHED", { workerGroup: "gpu" }),
    ];
    f.workerGroups = { gpu: {} };
    expect(explainInstance(f).map((e) => [e.code, e.reason])).toEqual([
      ["c", "NOT_STARTED"],
      ["e", "NO_WORKER"],
    ]);
  });

  it("running and finished tasks still answer when asked one by one", () => {
    const f = facts([shell("a"), shell("b")], "SD");
    f.attempts = [
      attempt("a", 1, "SUCCESS", { endedAt: NOW - 1_000 }),
      attempt("b", 1, "RUNNING", { worker: "w1", startedAt: NOW - 500 }),
    ];
    expect(explain(f, "a").message).toBe(`finished SUCCESS at ${at(NOW - 1_000)}`);
    expect(explain(f, "b").message).toBe(`running on worker w1 since ${at(NOW - 500)}`);
    f.attempts = [attempt("b", 1, "NEED_FAULT_TOLERANCE", { worker: "w1" })];
    expect(explain(f, "b").reason).toBe("FAILING_OVER");
  });

  it("a 10,000-task chain blocked at its head explains without deep recursion", () => {
    const n = 10_000;
    const tasks = Array.from({ length: n }, (_, i) => shell(`t${i}`, i === 0 ? [] : [`t${i - 1}`]));
    const f = facts(tasks, `F${"-".repeat(n - 1)}`);
    const all = explainInstance(f);
    expect(all).toHaveLength(n - 1);
    expect(all.at(-1)?.message).toBe(
      `will not run in this round: upstream 't${n - 2}' cannot run (its upstream 't0' ended FAILURE)`,
    );
  });
});

describe("a logic task's retry", () => {
  it("waits for its interval without a record: retry due after the failed attempt", () => {
    const tasks = [
      {
        code: "child",
        type: "SUB_WORKFLOW",
        workflow: "etl",
        retries: 2,
        retryIntervalSeconds: 60,
      },
    ];
    const f = facts(tasks, "D", { counters: { 0: [2, 1, 0] } });
    f.attempts = [attempt("child", 1, "FAILURE", { endedAt: NOW - 10_000 })];
    expect(explain(f, "child")).toMatchObject({
      state: "NOT_STARTED",
      reason: "RETRY_DUE",
      message: `retry due at ${at(NOW + 50_000)} (attempt 2)`,
    });
  });
});

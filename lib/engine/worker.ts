/**
 * The worker (DolphinScheduler's WorkerServer): claims a task attempt with a conditional write on
 * (state, attempt) so a duplicate delivery never runs it twice, runs it while its lease is kept
 * (its own, then its worker's from the first renewal on, worker-lease.ts; in Lambda, until past
 * the invocation's end), writes the result conditioned on still holding that attempt, and sends
 * the task event to the dispatcher.
 * Between the two the attempt stays in the leases index with a short deadline (the outbox of task
 * events): a worker that dies there has its event sent by the sweeper within seconds.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { SQSBatchResponse, SQSRecord } from "aws-lambda";
import { isFinalTaskState } from "../core/model.js";
import { OutParams, parseSetValues } from "../core/out-params.js";
import { ParamError, paramsToEnv } from "../core/params.js";
import type { TaskLogs, TaskLogWriter } from "../logs/task-log.js";
import type { TaskMessage } from "../queue/messages.js";
import type { Queues } from "../queue/queues.js";
import { prepareAttemptTask, secretClientsOf, secretOutError } from "../secrets/attempt-secrets.js";
import type { SecretMasker } from "../secrets/mask.js";
import { SecretReadError, type SecretSource } from "../secrets/secret-source.js";
import { secretSourceFromEnv } from "../secrets/sources.js";
import type { Store } from "../store/store.js";
import { runHttp } from "../tasks/http.js";
import { runLambda } from "../tasks/lambda.js";
import { killError, type TaskClients, type TaskPlugin } from "../tasks/plugin.js";
import { dryRunOutcome, renderingLines, renderTask } from "../tasks/render-task.js";
import { runShell } from "../tasks/shell.js";
import { runStepFunctions } from "../tasks/step-functions.js";
import { substituteTask } from "../tasks/substitute.js";
import { keepAttempt } from "./attempt-keeper.js";
import { awaitPromisedHalt } from "./halt-gate.js";
import type { STORE_RETRY_MS } from "./store-retry.js";
import { WorkerHousekeeping } from "./worker-housekeeping.js";
import { WorkerLease } from "./worker-lease.js";
import { AttemptReporter, type AttemptResult, type TASK_EVENT_DUE_MS } from "./worker-report.js";

export interface WorkerDeps {
  store: Store;
  queues: Queues;
  logs: TaskLogs;
  now: () => number;
  /**
   * Root of working directories (`<dataDir>/work/...`, lib/engine/work-dirs.ts) and of the
   * records of running tasks (`<dataDir>/run/...`, lib/tasks/task-processes.ts).
   */
  dataDir: string;
  /**
   * How long the work directory of an attempt that did not succeed is kept for debugging, ms
   * (SHOAL_KEEP_FAILED_WORK_MINUTES; default 60 minutes; 0: removed at once).
   */
  keepFailedWorkMs?: number;
  leaseMs: number;
  leaseRenewMs: number;
  /** Seconds a received task message stays invisible before it must be extended. */
  visibilityTimeoutSeconds: number;
  workerId?: string;
  plugins?: Partial<Record<string, TaskPlugin>>;
  /** The AWS clients LAMBDA and STEP_FUNCTIONS tasks call (lib/tasks/plugin.ts). */
  clients: TaskClients;
  /**
   * Where task secrets are read (lib/secrets/). Default: as this process's environment says
   * (SHOAL_SECRETS_SOURCES, lib/secrets/sources.ts), built when a task first needs a secret.
   */
  secrets?: SecretSource;
  /**
   * How long after its result write an attempt's task event counts as lost, ms: until the event
   * is sent the attempt stays in the leases index with this deadline, and the sweeper sends the
   * event again once it passes (the outbox of task events). Default {@link TASK_EVENT_DUE_MS}.
   */
  taskEventDueMs?: number;
  /**
   * How long the write of an attempt's result is tried again while the store is out of reach,
   * ms (default {@link STORE_RETRY_MS}).
   */
  resultWriteRetryMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

const PLUGINS: Record<string, TaskPlugin> = {
  SHELL: runShell,
  HTTP: runHttp,
  LAMBDA: runLambda,
  STEP_FUNCTIONS: runStepFunctions,
};

/** Why a stopping worker kills its tasks (they are handed back for failover). */
const SHUTTING_DOWN = "killed: the worker is shutting down";

export class Worker {
  readonly id: string;
  private shuttingDown = false;
  private readonly running = new Set<AbortController>();
  private readonly housekeeping: WorkerHousekeeping;
  private readonly reporter: AttemptReporter;
  private readonly lease: WorkerLease;
  private secrets: SecretSource | undefined;

  constructor(private readonly deps: WorkerDeps) {
    this.id = deps.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.housekeeping = new WorkerHousekeeping(deps);
    this.reporter = new AttemptReporter(deps, this.id);
    this.lease = new WorkerLease(deps, this.id);
  }

  /**
   * The worker's own cleanup, run at its start and then every few minutes (and due-checked at
   * each batch, which is all a Lambda worker gets): kills the task processes of workers on this
   * machine that died outright, and removes work directories no longer needed
   * (lib/engine/worker-housekeeping.ts). One at a time; never throws.
   */
  housekeep(): Promise<void> {
    return this.housekeeping.sweep();
  }

  /** {@link housekeep} when its period has passed; undefined otherwise. */
  housekeepIfDue(): Promise<void> | undefined {
    return this.housekeeping.sweepIfDue();
  }

  /**
   * Process shutdown: kills every running attempt's process group and reports each as
   * NEED_FAULT_TOLERANCE, so the dispatcher starts a new attempt at once (not counted against
   * retries), as DolphinScheduler fails over a worker that goes away. A worker killed outright
   * leaves that to the sweeper when the lease runs out.
   */
  shutdown(): void {
    this.shuttingDown = true;
    for (const c of this.running) c.abort(SHUTTING_DOWN);
  }

  /**
   * Handles an SQS batch of task messages (all run concurrently).
   * @param opts.deadline when the Lambda invocation that runs them ends (epoch ms): no attempt
   *   outlives it, so one still running at its first renewal has its lease set past it once, and
   *   is only read after that (attempt-keeper.ts, docs/cost.md). Absent (a long-running worker):
   *   attempts are handed to the worker's lease at their first renewal (worker-lease.ts).
   */
  async handleBatch(
    records: readonly SQSRecord[],
    opts: { deadline?: number } = {},
  ): Promise<SQSBatchResponse> {
    const failures: string[] = [];
    // Alongside the tasks, and awaited with them: a Lambda sandbox is frozen between batches.
    const housekeeping = this.housekeepIfDue();
    await Promise.all(
      records.map(async (r) => {
        try {
          await this.handleRecord(r, opts.deadline);
        } catch (e) {
          this.deps.log?.("worker: message failed", { error: String((e as Error)?.stack ?? e) });
          failures.push(r.messageId);
        }
      }),
    );
    await housekeeping;
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  }

  async handleRecord(record: SQSRecord, deadline?: number): Promise<void> {
    const msg = JSON.parse(record.body) as TaskMessage;
    const { store } = this.deps;
    const key = { instanceId: msg.instanceId, code: msg.code, attempt: msg.attempt };
    if (this.shuttingDown) throw new Error("worker is shutting down");
    const claimedAt = this.deps.now();
    // The dispatcher puts the item and sends this message at once: the claim may come first.
    const claimed = await store.updateTask(
      key,
      ["SUBMITTED", "DISPATCHED"],
      {
        state: "RUNNING",
        startedAt: claimedAt,
        worker: this.id,
        leaseExpiresAt: claimedAt + this.deps.leaseMs,
      },
      {
        createWith: {
          ...key,
          workflow: msg.workflow,
          type: msg.task.type,
          state: "DISPATCHED",
          priority: msg.task.priority,
          workerGroup: msg.task.workerGroup,
          submittedAt: msg.submittedAt ?? claimedAt,
        },
      },
    );
    if (!claimed) {
      // Duplicate delivery, or killed before it started. If the attempt is over, its event may
      // have been lost with a crashed worker: sending it again is harmless.
      const existing = await store.getTaskInstance(msg.instanceId, msg.code, msg.attempt);
      if (existing && isFinalTaskState(existing.state)) {
        await this.reporter.emit(msg, existing.state, existing.outputs);
        if (existing.leaseExpiresAt !== undefined)
          await this.reporter.eventSent(msg, existing.state);
      }
      return;
    }
    // Recorded as running here: its directories are safe from the sweep, and its processes are
    // killed should this worker die outright.
    const attempt = this.housekeeping.begin(msg);
    let result: AttemptResult | "lost" | "shutdown" | undefined;
    try {
      result = await this.run(msg, record, attempt, deadline);
      await this.reporter.report(msg, result);
    } finally {
      // After the report: the next task does not wait for the file system.
      const ok = typeof result === "object" && result.state === "SUCCESS";
      await this.housekeeping.ended(msg, attempt, ok);
    }
  }

  /** The secret source (deps.secrets, else built from the environment on first use). */
  private secretSource(): SecretSource {
    if (!this.secrets) {
      try {
        this.secrets =
          this.deps.secrets ?? secretSourceFromEnv(process.env, secretClientsOf(this.deps.clients));
      } catch (e) {
        throw new SecretReadError((e as Error).message);
      }
    }
    return this.secrets;
  }

  /**
   * Runs the attempt; "lost" when the lease was lost (the result must not be written),
   * "shutdown" when the worker is stopping (the task was killed and must be failed over); PAUSED
   * or KILLED without starting it when a halt of its instance was promised before its claim
   * (lib/engine/halt-gate.ts).
   */
  private async run(
    msg: TaskMessage,
    record: SQSRecord,
    attempt: ReturnType<WorkerHousekeeping["begin"]>,
    deadline: number | undefined,
  ): Promise<AttemptResult | "lost" | "shutdown"> {
    const { deps } = this;
    const fileLog = deps.logs.open({
      workflow: msg.workflow,
      instanceId: msg.instanceId,
      code: msg.code,
      attempt: msg.attempt,
    });
    // A SHELL task sets OUT parameters with `${setValue(name=value)}` lines (DolphinScheduler).
    const outs = new OutParams();
    let outError: string | undefined;
    // Set once the attempt's secrets are resolved: every line is masked before it is written,
    // and an OUT value that holds a secret is refused (never stored, even masked).
    let masker: SecretMasker | undefined;
    // OUT values are read from the raw line: masking first would let a short value mangle the
    // `${setValue(…)}` itself, and the value be lost without a word.
    const parseOuts = (raw: string) => {
      if (!raw.includes("setValue(")) return;
      for (const { name, value } of parseSetValues(raw)) {
        outError ??= masker?.contains(value) ? secretOutError(name) : outs.set(name, value);
      }
    };
    const log: TaskLogWriter = {
      write: (raw: string, at?: number) => {
        fileLog.write(masker ? masker.mask(raw) : raw, at);
        // With secrets, a SHELL task's lines arrive here masked: its raw lines come through
        // the masker's streams instead (withRawLines below).
        if (msg.task.type === "SHELL" && !masker) parseOuts(raw);
      },
      close: () => fileLog.close(),
    };
    const kill = new AbortController();
    this.running.add(kill);
    // A shutdown that came while the claim was being written found nothing to kill yet.
    if (this.shuttingDown) kill.abort(SHUTTING_DOWN);
    const key = { instanceId: msg.instanceId, code: msg.code, attempt: msg.attempt };
    const kept = keepAttempt(deps, {
      key,
      workerId: this.id,
      record,
      lease: this.lease,
      kill,
      deadline,
      write: (line) => log.write(line),
    });
    try {
      log.write(
        `shoal: ${msg.task.type} task '${msg.code}' attempt ${msg.attempt} of ${msg.workflow}/${msg.instanceId} on ${this.id}`,
      );
      // After the claim, before anything starts: a stop or pause answered 202 is honoured.
      const gate = await awaitPromisedHalt(deps, key, this.id, kill.signal, (line) =>
        log.write(line),
      );
      if (gate !== "run") {
        if (gate === "lost" || kept.lost) return "lost";
        if (gate === "aborted") {
          if (this.shuttingDown) return "shutdown";
          return { state: "KILLED", error: killError(kill.signal) };
        }
        log.write(`shoal: ${gate.error}`);
        return gate;
      }
      if (msg.dryRun) {
        // What would run, resolved exactly as a real run resolves it (lib/tasks/render-task.ts).
        const rendering = renderTask(msg.task, msg.params, {
          baseMs: msg.baseTime ?? msg.submittedAt,
          ...(msg.timezone ? { zone: msg.timezone } : {}),
        });
        log.write(`shoal: dry run: what task '${msg.code}' would run`);
        for (const line of renderingLines(rendering)) log.write(line);
        log.write("shoal: dry run, nothing executed");
        const outcome = dryRunOutcome(rendering);
        if (outcome.warning) {
          log.write(`shoal: ${outcome.warning}`);
          await deps.store.updateTask(
            key,
            ["RUNNING"],
            { warning: outcome.warning },
            { worker: this.id },
          );
        }
        return outcome.error
          ? { state: outcome.state, error: outcome.error }
          : { state: outcome.state };
      }
      const plugin = deps.plugins?.[msg.task.type] ?? PLUGINS[msg.task.type];
      if (!plugin) return { state: "FAILURE", error: `no plugin for task type ${msg.task.type}` };
      const workDir = attempt.dirs.attempt;
      const instanceDir = attempt.dirs.shared;
      await this.housekeeping.workDirs.prepare(attempt.dirs);
      let task: typeof msg.task;
      let secretEnv: Record<string, string> = {};
      try {
        // Secrets are read here, after parameter substitution (lib/secrets/attempt-secrets.ts).
        ({
          task,
          env: secretEnv,
          masker,
        } = await prepareAttemptTask(
          msg.task,
          (t) => substituteTask(t, msg.params, msg.baseTime ?? msg.submittedAt, msg.timezone),
          () => this.secretSource(),
        ));
      } catch (e) {
        if (!(e instanceof ParamError || e instanceof SecretReadError)) throw e;
        log.write(`shoal: ${e.message}`);
        return { state: "FAILURE", error: e.message };
      }
      const env: Record<string, string> = {
        ...paramsToEnv(msg.params),
        SHOAL_WORKFLOW: msg.workflow,
        SHOAL_WORKFLOW_VERSION: String(msg.version),
        SHOAL_INSTANCE_ID: msg.instanceId,
        SHOAL_TASK_CODE: msg.code,
        SHOAL_ATTEMPT: String(msg.attempt),
        SHOAL_INSTANCE_DIR: instanceDir,
        ...secretEnv,
      };
      const result = await plugin({
        task,
        params: msg.params,
        env,
        log,
        signal: kill.signal,
        workDir,
        clients: deps.clients,
        processGroup: attempt.record.processGroup,
        ...(masker
          ? { masker: task.type === "SHELL" ? masker.withRawLines(parseOuts) : masker }
          : {}),
        warn: (raw) => {
          const warning = masker ? masker.mask(raw) : raw;
          deps.store
            .updateTask(key, ["RUNNING"], { warning }, { worker: this.id })
            .catch((e) => deps.log?.("worker: warning not recorded", { error: String(e) }));
        },
      });
      if (kept.lost) return "lost";
      if (masker && result.error !== undefined) result.error = masker.mask(result.error);
      if (result.state === "SUCCESS") {
        if (outError) {
          log.write(`shoal: ${outError}`);
          return { state: "FAILURE", error: outError };
        }
        // OUT values from the plugin (HTTP JSON paths) go through the same limits.
        for (const [name, value] of Object.entries(result.outputs ?? {})) {
          const problem = masker?.contains(value) ? secretOutError(name) : outs.set(name, value);
          if (problem) {
            log.write(`shoal: ${problem}`);
            return { state: "FAILURE", error: problem };
          }
        }
        const all = outs.toRecord();
        if (Object.keys(all).length > 0) result.outputs = all;
      }
      // Killed by the shutdown (not a result of its own): hand it back for failover.
      return this.shuttingDown && result.state === "KILLED" ? "shutdown" : result;
    } catch (e) {
      const message = masker ? masker.mask((e as Error).message) : (e as Error).message;
      log.write(`shoal: task failed to run: ${message}`);
      if (kept.lost) return "lost";
      return this.shuttingDown ? "shutdown" : { state: "FAILURE", error: message };
    } finally {
      this.running.delete(kill);
      kept.stop();
      await log.close();
    }
  }
}

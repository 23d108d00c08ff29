/**
 * ECS task scale-in protection for `shoal worker` in an ECS service: while the worker runs at
 * least one task it asks the ECS agent not to stop its container at scale-in, and gives that up
 * when it is idle again, so scaling in only stops idle workers and long tasks are not restarted
 * elsewhere. Uses the agent endpoint `$ECS_AGENT_URI/task-protection/v1/state`
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-scale-in-protection-endpoint.html):
 * PUT `{"ProtectionEnabled": true, "ExpiresInMinutes": n}` (1..2880) or `{"ProtectionEnabled": false}`.
 * The task role needs ecs:UpdateTaskProtection (cdk/ecs-workers.ts grants it).
 *
 * Best effort: a failed request is logged and retried on the next change or renewal; the lease
 * and SIGTERM hand-back still keep a task from being lost.
 */

/** How long one protection lasts, minutes; renewed at half of it while tasks run. */
export const PROTECTION_MINUTES = 60;

export interface TaskProtectionOptions {
  /** `ECS_AGENT_URI` (injected by ECS into every container). */
  agentUri: string;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Protection length, minutes (default {@link PROTECTION_MINUTES}). */
  minutes?: number;
  /** Injected in tests. */
  fetch?: typeof fetch;
}

export class TaskProtection {
  private running = 0;
  /** What the agent was last told (undefined: nothing yet). */
  private protectedNow: boolean | undefined;
  private renewal: NodeJS.Timeout | undefined;
  /** Requests go out one at a time, in order, so the last word always wins. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly opts: TaskProtectionOptions) {}

  /** Runs `work` as one task of this worker: protected from scale-in while any task runs. */
  async around<T>(work: () => Promise<T>): Promise<T> {
    if (this.running++ === 0) this.set(true);
    try {
      return await work();
    } finally {
      if (--this.running === 0) this.set(false);
    }
  }

  /** Waits for the requests sent so far (tests, shutdown). */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Stops renewing (shutdown); protection then lapses by itself at the latest. */
  stop(): void {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = undefined;
  }

  private set(on: boolean): void {
    const minutes = this.opts.minutes ?? PROTECTION_MINUTES;
    if (on && !this.renewal) {
      this.renewal = setInterval(() => this.enqueue(true, minutes), (minutes * 60_000) / 2);
      this.renewal.unref();
    } else if (!on) this.stop();
    this.enqueue(on, minutes);
  }

  private enqueue(on: boolean, minutes: number): void {
    this.chain = this.chain.then(() => this.send(on, minutes));
  }

  private async send(on: boolean, minutes: number): Promise<void> {
    // A renewal repeats `true`; a `false` that the agent already has is not sent again.
    if (!on && this.protectedNow === false) return;
    const body = on
      ? { ProtectionEnabled: true, ExpiresInMinutes: minutes }
      : { ProtectionEnabled: false };
    try {
      const res = await (this.opts.fetch ?? fetch)(
        `${this.opts.agentUri}/task-protection/v1/state`,
        {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(5_000),
        },
      );
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      this.protectedNow = on;
    } catch (e) {
      this.opts.log?.("worker: task scale-in protection not updated", {
        protect: on,
        error: (e as Error).message,
      });
    }
  }
}

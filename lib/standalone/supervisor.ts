/**
 * Supervision of one child of standalone (an emulator, the built-in worker) for its whole life,
 * not only until it is ready: a child that exits while standalone is not stopping is started
 * again after a backoff, and the part's state (`/v1/health` `parts`) says so meanwhile. A part
 * that cannot be started again (`maxFailures` failures in a row) is given up: the supervisor
 * calls `onGiveUp`, and standalone stops rather than serve while broken.
 */
import type { Child } from "./child-process.js";

/** A part's state as `/v1/health` reports it. */
export type PartState = "ok" | "restarting" | "down";

/** How a {@link ChildSupervisor} starts its child and reacts to its death. */
export interface SupervisorOptions<T> {
  /** The part's name in log lines and in `/v1/health` `parts`: `dynamodb`, `sqs`, `worker`. */
  name: string;
  /**
   * Forks the child and resolves once it is ready.
   * @param previous the ready value of the child that died (an emulator's endpoints: the new
   *   one listens on the same port); undefined at the first start.
   */
  start: (previous: T | undefined) => Promise<Child<T>>;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  /** Delay before the first restart, ms (default 500); doubles at each failure in a row. */
  initialDelayMs?: number;
  /** The longest delay between restarts, ms (default 30 000). */
  maxDelayMs?: number;
  /** A child that stayed up this long (ms, default 60 000) resets the delay and the count. */
  stableMs?: number;
  /**
   * Restarts that may fail in a row (a start that throws, or a child that dies again before
   * `stableMs`) before the part is given up; default: never given up.
   */
  maxFailures?: number;
  /**
   * True once the owner is stopping: an exit then is expected (Ctrl-C reaches the children too,
   * and the worker stops on it before standalone's shutdown reaches it), nothing is restarted.
   */
  stopping?: () => boolean;
  /** Called after each restart that succeeded (not at the first start). */
  onRestarted?: () => void;
  /** Called once, when the part is given up (its state is then `down`). */
  onGiveUp?: (error: Error) => void;
  /**
   * A likely cause of a death or a failed restart, added to the log line (and to the give-up
   * message): for an emulator, a full file system under its data.
   */
  diagnose?: () => string | undefined;
  now?: () => number;
}

/** Starts a child and keeps it running until {@link ChildSupervisor.stop}. */
export class ChildSupervisor<T> {
  private current: Child<T> | undefined;
  private last: T | undefined;
  private partState: PartState = "ok";
  /** Restarts since the child was last up for `stableMs`. */
  private failures = 0;
  private startedAt = 0;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  /** The restart under way, if any (stop waits for it). */
  private restarting: Promise<void> | undefined;

  constructor(private readonly opts: SupervisorOptions<T>) {}

  /** `ok`, `restarting` (dead, a restart is due or under way) or `down` (given up). */
  get state(): PartState {
    return this.partState;
  }

  /** The running child's pid, if one runs. */
  get pid(): number | undefined {
    return this.current?.process.pid;
  }

  /**
   * The first start; resolves with the child's ready value.
   * @throws what the child's start throws (nothing is supervised then).
   */
  async start(): Promise<T> {
    const child = await this.opts.start(undefined);
    this.adopt(child);
    return child.ready;
  }

  /** Stops supervising and stops the child (waits for a restart under way, then stops it). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.restarting;
    await this.current?.stop();
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private adopt(child: Child<T>): void {
    this.current = child;
    this.last = child.ready;
    this.startedAt = this.now();
    this.partState = "ok";
    child.process.once("exit", (code, signal) => this.onExit(child, code, signal));
  }

  private halted(): boolean {
    return this.stopping || this.opts.stopping?.() === true;
  }

  private onExit(child: Child<T>, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.halted() || child !== this.current) return;
    this.current = undefined;
    this.partState = "restarting";
    if (this.now() - this.startedAt >= (this.opts.stableMs ?? 60_000)) this.failures = 0;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    this.next(
      `the ${this.opts.name} process (pid ${child.process.pid}) exited unexpectedly (${how})${this.cause()}`,
    );
  }

  /** `: <cause>` when {@link SupervisorOptions.diagnose} names one, else empty. */
  private cause(): string {
    const cause = this.opts.diagnose?.();
    return cause ? `: ${cause}` : "";
  }

  /** Schedules the next restart, or gives the part up; logs one line saying which. */
  private next(what: string): void {
    const { name, maxFailures = Number.POSITIVE_INFINITY } = this.opts;
    if (this.failures >= maxFailures) {
      this.partState = "down";
      const error = new Error(
        `${what}; it could not be restarted (${this.failures} attempts in a row failed), so standalone stops`,
      );
      this.opts.log(`standalone: ${error.message}`, { part: name });
      this.opts.onGiveUp?.(error);
      return;
    }
    const delayMs = Math.min(
      (this.opts.initialDelayMs ?? 500) * 2 ** this.failures,
      this.opts.maxDelayMs ?? 30_000,
    );
    this.failures++;
    this.opts.log(`standalone: ${what}; restarting it in ${delayMs / 1000} s`, {
      part: name,
      attempt: this.failures,
    });
    this.timer = setTimeout(() => {
      this.restarting = this.restart().finally(() => {
        this.restarting = undefined;
      });
    }, delayMs);
  }

  private async restart(): Promise<void> {
    if (this.halted()) return;
    try {
      const child = await this.opts.start(this.last);
      if (this.halted()) {
        await child.stop();
        return;
      }
      this.adopt(child);
      this.opts.log(
        `standalone: the ${this.opts.name} process restarted (pid ${child.process.pid})`,
        {
          part: this.opts.name,
        },
      );
      this.opts.onRestarted?.();
    } catch (e) {
      if (this.halted()) return;
      this.next(
        `the ${this.opts.name} process failed to restart: ${(e as Error)?.message ?? e}${this.cause()}`,
      );
    }
  }
}

/**
 * The small part of the AWS SDK v3 client contract that Shoal's code and benchmarks use, for the
 * embedded backend's in-process clients (lib/embedded/): `send(command)`, `destroy()` and a
 * `middlewareStack` whose `add(middleware, { step })` wraps every call, so request counting
 * (lib/aws/clients.ts), fault injection (lib/aws/fault-injection.ts), the latency simulation and
 * the cost instrumentation (bench/) work the same on an embedded client as on an SDK client.
 *
 * Steps run in the SDK's order (initialize, serialize, build, finalizeRequest, deserialize). As in
 * the SDK, the steps from finalizeRequest down run inside a retry loop: an error whose
 * `$retryable` is set, or that the SDK treats as throttling or a 5xx, is tried again up to
 * {@link MAX_ATTEMPTS} times in all (the SDK's standard retry strategy, without its wait: the
 * embedded backend answers in microseconds), so an injected fault behaves as it does on the
 * emulators.
 */

import { yieldIfBusy } from "./event-loop-share.js";

/** The SDK's middleware steps, in the order a request passes them. */
export type Step = "initialize" | "serialize" | "build" | "finalizeRequest" | "deserialize";

const STEPS: readonly Step[] = [
  "initialize",
  "serialize",
  "build",
  "finalizeRequest",
  "deserialize",
];

/** What a middleware learns about the call (the SDK's handler execution context, in part). */
export interface EmbeddedContext {
  /** `PutItemCommand`, `GetCommand`, `ReceiveMessageCommand`, … (the command's class name). */
  commandName: string;
  /** `DynamoDBClient` or `SQSClient`, as the SDK names them. */
  clientName: string;
}

/** `args.input` is the command's input; the answer's `output` is what `send` returns. */
/** Loose as the SDK's own middleware types: inputs and outputs depend on the command. */
type Loose = Record<string, unknown> & { [key: string]: unknown };

export type EmbeddedHandler = (args: {
  input: Loose;
}) => Promise<{ output: Loose; response?: unknown }>;

/** A middleware as the SDK takes it: `(next, context) => handler`. */
export type EmbeddedMiddleware = (
  next: EmbeddedHandler,
  context: EmbeddedContext,
) => EmbeddedHandler;

/** Calls are tried at most this often when an error is retryable (the SDK's default is 3). */
export const MAX_ATTEMPTS = 4;

/** Error names the SDK's standard retry strategy retries (throttling and transient errors). */
const RETRYABLE_NAMES = new Set([
  "ThrottlingException",
  "Throttling",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "RequestThrottled",
  "RequestThrottledException",
  "TooManyRequestsException",
  "TransactionInProgressException",
  "InternalServerError",
  "ServiceUnavailable",
  "TimeoutError",
]);

/** Whether the SDK would try a call that failed with `err` again. */
export function isRetryable(err: unknown): boolean {
  const e = err as {
    name?: string;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  if (!e || typeof e !== "object") return false;
  if (e.$retryable) return true;
  if (e.name && RETRYABLE_NAMES.has(e.name)) return true;
  const status = e.$metadata?.httpStatusCode;
  return status !== undefined && status >= 500;
}

/** A middleware stack with the SDK's `add` (other SDK methods are not needed by Shoal). */
export class EmbeddedMiddlewareStack {
  private readonly entries: Array<{ step: Step; name?: string; mw: EmbeddedMiddleware }> = [];

  /** Adds `mw` at `options.step` (default `initialize`); a second middleware of one name throws. */
  add(mw: EmbeddedMiddleware, options: { step?: Step; name?: string } = {}): void {
    const step = options.step ?? "initialize";
    if (!STEPS.includes(step)) throw new Error(`unknown middleware step '${step}'`);
    if (options.name && this.entries.some((e) => e.name === options.name))
      throw new Error(`Duplicate middleware name '${options.name}'`);
    this.entries.push({ step, mw, ...(options.name ? { name: options.name } : {}) });
  }

  /** Removes the middleware named `name`; whether there was one. */
  remove(name: string): boolean {
    const i = this.entries.findIndex((e) => e.name === name);
    if (i < 0) return false;
    this.entries.splice(i, 1);
    return true;
  }

  /** The handler of one call: every middleware around `core`, retries below finalizeRequest. */
  resolve(core: EmbeddedHandler, context: EmbeddedContext): EmbeddedHandler {
    const wrap = (steps: readonly Step[], inner: EmbeddedHandler): EmbeddedHandler => {
      let h = inner;
      // The first added middleware of a step is the outermost, as in the SDK.
      for (const step of [...steps].reverse()) {
        const ofStep = this.entries.filter((e) => e.step === step);
        for (const e of [...ofStep].reverse()) h = e.mw(h, context);
      }
      return h;
    };
    const lower = wrap(["finalizeRequest", "deserialize"], core);
    const retried: EmbeddedHandler = async (args) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await lower(args);
        } catch (err) {
          if (attempt >= MAX_ATTEMPTS || !isRetryable(err)) throw err;
        }
      }
    };
    return wrap(["initialize", "serialize", "build"], retried);
  }
}

/** A command as the SDK builds it: its class names the operation, `input` holds the request. */
export interface EmbeddedCommand {
  readonly input: unknown;
}

/** What `send` takes besides the command (the SDK's HttpHandlerOptions, in part). */
export interface SendOptions {
  /** Ends a call that waits (a long-polling ReceiveMessage) with an error named `AbortError`. */
  abortSignal?: AbortSignal;
}

/**
 * The base of the embedded clients: subclasses implement {@link execute} for the commands
 * they serve, by the command's class name.
 */
export abstract class EmbeddedClient {
  readonly middlewareStack = new EmbeddedMiddlewareStack();
  /** Read by nothing in Shoal; present because SDK clients have one. */
  readonly config: Record<string, unknown> = {};

  constructor(private readonly clientName: string) {}

  /**
   * Runs `command` through the middleware stack and {@link execute}.
   * @returns the command's output, with `$metadata` as an SDK answer carries it.
   * @throws the service's error (`name`, `$fault`, `$metadata.httpStatusCode`) as the SDK would.
   */
  // biome-ignore lint/suspicious/noExplicitAny: outputs are typed by the command, as in the SDK
  async send(command: EmbeddedCommand, options?: SendOptions): Promise<any> {
    // A turn of the event loop now and then, or a busy stream of calls starves its I/O.
    const turn = yieldIfBusy();
    if (turn) await turn;
    const commandName = command.constructor.name;
    const handler = this.middlewareStack.resolve(
      async (args) => {
        try {
          const output = await this.execute(commandName, args.input, command, options);
          return { output: { ...output, $metadata: METADATA } };
        } catch (e) {
          throw storageFailure(e);
        }
      },
      { commandName, clientName: this.clientName },
    );
    const { output } = await handler({ input: command.input as Loose });
    return output;
  }

  /**
   * Serves one command.
   * @param commandName the command's class name (`PutItemCommand`, `PutCommand`, …).
   * @param input the (possibly middleware-changed) input.
   * @param command the command itself, for `instanceof` where two SDK packages share a name.
   * @param options what `send` was given besides the command (`abortSignal`).
   */
  protected abstract execute(
    commandName: string,
    input: unknown,
    command: EmbeddedCommand,
    options?: SendOptions,
  ): Promise<Record<string, unknown>>;

  /** Releases what the client holds (nothing by default). */
  destroy(): void {}
}

/** SQLite's primary result codes of a storage failure: BUSY, LOCKED, READONLY, IOERR, FULL, CANTOPEN. */
const STORAGE_FAILURES = new Set([5, 6, 8, 10, 13, 14]);

/**
 * A storage failure (node:sqlite's `ERR_SQLITE_ERROR` with a storage result code: a full disk, an
 * I/O error, a lock not granted within the busy timeout) becomes what the service answers when
 * its own storage fails: a retryable 5xx, so callers treat it as an outage (the API answers 503)
 * exactly as they do an emulator's or AWS's. The one place both engines map it, on the in-process
 * path and the HTTP endpoint alike. Other errors pass unchanged.
 * @param name the service's error code for it (DynamoDB `InternalServerError`, SQS `ServiceUnavailable`).
 */
export function storageFailure(e: unknown, name = "InternalServerError", status = 500): unknown {
  if (e instanceof EmbeddedServiceError) return e;
  const err = e as { code?: string; errcode?: number; errstr?: string; message?: string };
  if (err?.code !== "ERR_SQLITE_ERROR") return e;
  // Extended result codes carry the primary one in the low byte; any other code is a fault of
  // ours and stays as it is.
  if (!STORAGE_FAILURES.has((err.errcode ?? 0) & 0xff)) return e;
  return new EmbeddedServiceError(
    name,
    `the embedded backend's storage failed: ${err.errstr ?? err.message ?? "unknown"} (SQLite error ${err.errcode ?? "?"})`,
    { status, retryable: true },
  );
}

const METADATA = Object.freeze({ httpStatusCode: 200, attempts: 1, totalRetryDelay: 0 });

/**
 * An error as an SDK client throws it for a service's answer: `name` is the AWS error code.
 * `extra` carries fields some errors have (a failed condition's `Item`).
 */
export class EmbeddedServiceError extends Error {
  readonly $fault: "client" | "server";
  readonly $metadata: { httpStatusCode: number; attempts: number; totalRetryDelay: number };
  readonly $retryable?: { throttling: boolean };

  constructor(
    name: string,
    message: string,
    opts: { status?: number; fault?: "client" | "server"; retryable?: boolean } = {},
    extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = name;
    const status = opts.status ?? 400;
    this.$fault = opts.fault ?? (status >= 500 ? "server" : "client");
    this.$metadata = { httpStatusCode: status, attempts: 1, totalRetryDelay: 0 };
    if (opts.retryable) this.$retryable = { throttling: false };
    Object.assign(this, extra);
  }
}

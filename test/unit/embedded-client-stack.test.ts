/**
 * The SDK contract of the embedded clients (lib/embedded/client-stack.ts): middlewares wrap a
 * call in the SDK's step order, retryable errors are tried again (4 attempts in all) below
 * finalizeRequest as in the SDK, and a storage failure of SQLite becomes a retryable 500
 * InternalServerError, which the API answers with 503.
 */
import { describe, expect, it } from "vitest";
import {
  EmbeddedClient,
  type EmbeddedCommand,
  EmbeddedServiceError,
  MAX_ATTEMPTS,
} from "../../lib/embedded/client-stack.js";

class PingCommand implements EmbeddedCommand {
  constructor(readonly input: Record<string, unknown>) {}
}

/** A client whose `execute` is given. */
class Fake extends EmbeddedClient {
  calls = 0;
  constructor(private readonly run: (input: unknown) => Record<string, unknown>) {
    super("FakeClient");
  }
  protected async execute(_name: string, input: unknown): Promise<Record<string, unknown>> {
    this.calls++;
    return this.run(input);
  }
}

/** An error as node:sqlite throws it. */
function sqliteError(errcode: number, errstr: string): Error {
  return Object.assign(new Error(errstr), { code: "ERR_SQLITE_ERROR", errcode, errstr });
}

describe("embedded clients' SDK contract", () => {
  it("runs middlewares in the SDK's step order and returns the output with $metadata", async () => {
    const order: string[] = [];
    const c = new Fake((input) => ({ echo: input }));
    for (const step of ["deserialize", "initialize", "build"] as const)
      c.middlewareStack.add(
        (next, ctx) => async (args) => {
          order.push(`${step}:${ctx.commandName}`);
          return next({ input: { ...args.input, [step]: true } });
        },
        { step, name: step },
      );
    const out = await c.send(new PingCommand({ a: 1 }));
    expect(order).toEqual([
      "initialize:PingCommand",
      "build:PingCommand",
      "deserialize:PingCommand",
    ]);
    expect(out.echo).toEqual({ a: 1, initialize: true, build: true, deserialize: true });
    expect(out.$metadata.httpStatusCode).toBe(200);
  });

  it("refuses a second middleware of one name", () => {
    const c = new Fake(() => ({}));
    c.middlewareStack.add((next) => next, { name: "x" });
    expect(() => c.middlewareStack.add((next) => next, { name: "x" })).toThrow(/Duplicate/);
  });

  it("tries a retryable error again, at most MAX_ATTEMPTS times; a client error once", async () => {
    const throttled = new Fake(() => {
      throw new EmbeddedServiceError("ThrottlingException", "slow down");
    });
    await expect(throttled.send(new PingCommand({}))).rejects.toMatchObject({
      name: "ThrottlingException",
    });
    expect(throttled.calls).toBe(MAX_ATTEMPTS);
    let n = 0;
    const flaky = new Fake(() => {
      if (++n < 3) throw new EmbeddedServiceError("InternalServerError", "oops", { status: 500 });
      return { ok: true };
    });
    expect((await flaky.send(new PingCommand({}))).ok).toBe(true);
    const failed = new Fake(() => {
      throw new EmbeddedServiceError(
        "ConditionalCheckFailedException",
        "The conditional request failed",
      );
    });
    await expect(failed.send(new PingCommand({}))).rejects.toMatchObject({
      name: "ConditionalCheckFailedException",
      $fault: "client",
      $metadata: { httpStatusCode: 400 },
    });
    expect(failed.calls).toBe(1);
  });

  it("turns a full disk into a retryable 500 InternalServerError; a SQL bug stays itself", async () => {
    const full = new Fake(() => {
      throw sqliteError(13, "database or disk is full");
    });
    const err = await full.send(new PingCommand({})).catch((e) => e);
    expect(err).toBeInstanceOf(EmbeddedServiceError);
    expect(err).toMatchObject({
      name: "InternalServerError",
      $fault: "server",
      $metadata: { httpStatusCode: 500 },
    });
    expect(err.message).toContain("database or disk is full");
    expect(full.calls).toBe(MAX_ATTEMPTS);
    // An extended I/O error code (SQLITE_IOERR_FSYNC) counts as storage too.
    const io = new Fake(() => {
      throw sqliteError(1034, "disk I/O error");
    });
    await expect(io.send(new PingCommand({}))).rejects.toMatchObject({
      name: "InternalServerError",
    });
    const bug = new Fake(() => {
      throw sqliteError(1, "SQL logic error");
    });
    await expect(bug.send(new PingCommand({}))).rejects.toMatchObject({
      code: "ERR_SQLITE_ERROR",
      errcode: 1,
    });
    expect(bug.calls).toBe(1);
  });
});

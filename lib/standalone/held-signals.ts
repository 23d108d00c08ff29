/**
 * Test hook SHOAL_TEST_HOLD_COMMANDS (`stop,pause`: verbs of command ids): the dispatcher of a
 * standalone never finishes a batch that holds the signal of such a command, as a dispatcher
 * that hangs (or a dispatcher Lambda that fails) after the API accepted the command. The command
 * stays PENDING and unclaimed, and its message in flight for the events queue's visibility
 * timeout (30 s), which also holds back every later message of its instance (FIFO group). The
 * crash tests of a promised stop or pause use it (test/e2e/halt-promise.test.ts): `kill -9`
 * after the 202, then a restart, with the command certainly not carried out before the crash.
 */
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";

type Handler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/**
 * `handler`, except that a batch holding a signal of a command whose id starts with one of
 * `verbs` (followed by `:`) never settles. No verbs: `handler` itself.
 */
export function holdingSignals(
  verbs: readonly string[],
  handler: Handler,
  log?: (msg: string, fields?: Record<string, unknown>) => void,
): Handler {
  if (verbs.length === 0) return handler;
  const prefixes = verbs.map((v) => `${v}:`);
  return (event) => {
    const held = event.Records.find((r) => {
      const body = JSON.parse(r.body) as { kind?: string; commandId?: string };
      return body.kind === "command" && prefixes.some((p) => body.commandId?.startsWith(p));
    });
    if (!held) return handler(event);
    log?.("standalone: holding a command's signal (SHOAL_TEST_HOLD_COMMANDS)", {
      body: held.body,
    });
    return new Promise<never>(() => {});
  };
}

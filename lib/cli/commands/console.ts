/**
 * `shoal console`: the web console for a deployed Shoal, served on 127.0.0.1 with `/v1/`
 * requests proxied to the API and signed by the CLI (console-proxy.ts), until Ctrl-C.
 */
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { UsageError } from "../errors.js";
import { intIn } from "../options.js";

/** The port `shoal console` listens on unless told otherwise. */
export const DEFAULT_CONSOLE_PORT = 8233;

/** Registers `console`. */
export function registerConsole(program: Command, ctx: CliContext): void {
  program
    .command("console")
    .description(
      "serve the web console for a deployed Shoal on 127.0.0.1: its API requests are signed with your AWS credentials (SigV4) and proxied to --endpoint",
    )
    .option(
      "--port <port>",
      "local port of the console (0 = any free port)",
      intIn(0, 65535),
      DEFAULT_CONSOLE_PORT,
    )
    .action(async (opts: { port: number }) => {
      const settings = ctx.settings();
      if (settings.endpoint.source === "default") {
        throw new UsageError(
          "no Shoal endpoint to open the console for: pass --endpoint URL, set SHOAL_ENDPOINT, " +
            "or run `shoal config from-stack STACK` (a `shoal standalone` serves the console itself, at http://localhost:8080/)",
        );
      }
      // The CLI's own client settles the endpoint and the authentication (SigV4, token, none).
      const client = ctx.api();
      // Imported on use, as standalone is: other commands need no HTTP server or static files.
      const { startConsoleProxy } = await import("../console-proxy.js");
      const proxy = await startConsoleProxy({
        endpoint: client.endpoint,
        ...(client.authorization ? { authorization: client.authorization } : {}),
        port: opts.port,
        // A development convenience shared with standalone: serve another build of the console.
        ...(ctx.env.SHOAL_CONSOLE_DIR ? { consoleDir: ctx.env.SHOAL_CONSOLE_DIR } : {}),
      });
      ctx.out(`Shoal console for ${client.endpoint} at ${proxy.url} (Ctrl-C to stop)`);
      // Said at once rather than on the first page: missing credentials, a wrong endpoint.
      client.get("/v1/health").catch((err: unknown) => {
        ctx.io.stderr.write(`warning: GET /v1/health: ${(err as Error).message}\n`);
      });
      await untilInterrupted(ctx.io.signal);
      await proxy.close();
    });
}

/** Resolves when `signal` aborts, or without one on SIGINT or SIGTERM. */
function untilInterrupted(signal: AbortSignal | undefined): Promise<void> {
  if (signal) {
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

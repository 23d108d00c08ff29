/**
 * Runs the `shoal` CLI in-process (`main()`), capturing what it writes: how the CLI tests drive
 * it against the stub API, the API on the emulators, or a standalone.
 */
import { main } from "../../lib/cli/main.js";

/** What one CLI run returned and printed. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `shoal [--endpoint endpoint] ...args`.
 * @param opts.endpoint prepended as `--endpoint` when given.
 * @param opts.tty whether stdout claims to be a terminal (progress is redrawn in place).
 */
export async function runCli(
  args: string[],
  opts: { endpoint?: string; tty?: boolean } = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: {
      write: (s: string) => {
        stdout += s;
        return true;
      },
      isTTY: opts.tty ?? false,
    },
    stderr: {
      write: (s: string) => {
        stderr += s;
        return true;
      },
    },
  };
  const prefix = opts.endpoint !== undefined ? ["--endpoint", opts.endpoint] : [];
  const code = await main([...prefix, ...args], io);
  return { code, stdout, stderr };
}

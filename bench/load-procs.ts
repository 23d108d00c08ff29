/**
 * The load scenario's standalone (bench/load.ts): `shoal standalone` as a real child process (the
 * CLI a user runs, so the bench's own client load does not share its event loop), its process
 * tree read from Linux /proc (emulator children, the built-in worker), and the peak resident
 * memory of each (`VmHWM` of /proc/<pid>/status). Same idea as test/helpers/standalone.ts, not
 * imported from it (bench does not depend on test/).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/shoal.js", import.meta.url));

/** A running `shoal standalone` child. */
export interface StandaloneChild {
  apiUrl: string;
  dataDir: string;
  proc: ChildProcess;
  /** Everything it printed (stdout and stderr), for a failure's report. */
  output(): string;
  /** SIGINT, wait for the exit, remove the data dir. */
  stop(): Promise<void>;
}

/** Starts `shoal standalone --port 0 --workers <workers> --no-examples` on a fresh temp dir. */
export async function startStandaloneChild(workers: number): Promise<StandaloneChild> {
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-load-"));
  const proc = spawn(
    process.execPath,
    [BIN, "standalone", "--port", "0", "--data-dir", dataDir, "--workers", String(workers)].concat([
      "--no-examples",
    ]),
    {
      cwd: REPO,
      env: { ...process.env, SHOAL_QUIET: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  const keep = (d: Buffer) => {
    out += d;
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  proc.stdout?.on("data", keep);
  proc.stderr?.on("data", keep);
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const deadline = Date.now() + 60_000;
  let apiUrl: string | undefined;
  while (!apiUrl) {
    apiUrl = /API\s+(http:\/\/\S+)/.exec(out)?.[1];
    if (apiUrl) break;
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`standalone did not start: ${out.slice(-2000)}`);
    await delay(100);
  }
  return {
    apiUrl,
    dataDir,
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGINT");
        await Promise.race([exited, delay(30_000)]);
        if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Children of `pid`: pid → command line (Linux /proc). */
export function childrenOf(pid: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== pid) continue;
      out.set(Number(e), readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0").join(" "));
    } catch {}
  }
  return out;
}

/** A `VmHWM`/`VmRSS` figure of /proc/<pid>/status, KiB; NaN when the process is gone. */
function statusKiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
      readFileSync(`/proc/${pid}/status`, "utf8"),
    );
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The role of one of standalone's children, from its command line. */
function roleOf(cmd: string): string | undefined {
  const em = /emulator-main\.ts .* (dynamodb|sqs)\s*$/.exec(cmd);
  if (em) return `${em[1]} emulator`;
  if (/worker-main\.ts/.test(cmd)) return "worker";
  return undefined;
}

/** Peak memory of one process role over the run. */
export interface PeakMemory {
  role: string;
  /** Every pid seen in that role (more than one if it was restarted). */
  pids: number[];
  /** Highest VmHWM seen, MiB. */
  peakMiB: number;
  /** VmRSS at the last sample, MiB. */
  lastRssMiB: number;
}

/**
 * Samples VmHWM of standalone's main process and of each child every `everyMs` (a restarted
 * child has a new pid and its own peak: the highest is kept), so the peak of a child that died
 * meanwhile is not lost.
 */
export class MemoryWatch {
  private readonly peaks = new Map<string, PeakMemory>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly mainPid: number,
    everyMs = 2_000,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  sample(): void {
    const procs: Array<[string, number]> = [["standalone main", this.mainPid]];
    for (const [pid, cmd] of childrenOf(this.mainPid)) {
      const role = roleOf(cmd);
      if (role) procs.push([role, pid]);
    }
    for (const [role, pid] of procs) {
      const hwm = statusKiB(pid, "VmHWM");
      if (!Number.isFinite(hwm)) continue;
      const p = this.peaks.get(role) ?? { role, pids: [], peakMiB: 0, lastRssMiB: 0 };
      if (!p.pids.includes(pid)) p.pids.push(pid);
      p.peakMiB = Math.max(p.peakMiB, Math.round((hwm / 1024) * 10) / 10);
      p.lastRssMiB = Math.round((statusKiB(pid, "VmRSS") / 1024) * 10) / 10;
      this.peaks.set(role, p);
    }
  }

  /** Takes a last sample and stops. */
  stop(): PeakMemory[] {
    this.sample();
    clearInterval(this.timer);
    return [...this.peaks.values()];
  }
}

/** The 1-minute load average, rounded (the machine is shared: every figure is printed with it). */
export function load1(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

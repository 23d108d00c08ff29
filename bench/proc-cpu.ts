/**
 * CPU figures from Linux /proc: this process's reaped children, other processes (standalone's
 * emulator children, `shoal worker` children) and the whole machine, and a wait for the machine
 * to be quiet before measuring.
 */

import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";

/** Child processes of this process: pid → command line (Linux /proc). */
function childProcesses(): Map<number, string> {
  const out = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      out.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" "));
    } catch {}
  }
  return out;
}

/**
 * CPU ms used so far by standalone's emulator child processes (lib/standalone/emulator-main.ts
 * `<dataDir> dynamodb|sqs`), or undefined when the emulators run in this process.
 */
export function emulatorCpuMs(): { dynamodb: number; sqs: number } | undefined {
  let found = false;
  const out = { dynamodb: 0, sqs: 0 };
  for (const [pid, cmd] of childProcesses()) {
    const m = /emulator-main\.ts .* (dynamodb|sqs)\s*$/.exec(cmd);
    if (!m) continue;
    found = true;
    out[m[1] as "dynamodb" | "sqs"] += processCpuMs(pid);
  }
  return found ? out : undefined;
}

/** Busy CPU time of the whole machine (all cores, ms), from /proc/stat (Linux). */
export function machineBusyMs(): number {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (
      (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) *
        1000) /
      100
    );
  } catch {
    return Number.NaN;
  }
}

/**
 * Waits (at most `maxMs`) until the rest of the machine is quiet: other processes used less than
 * `thresholdPct` of one core over a 1 s sample. The machine is shared (builds and tests of other
 * sessions); a benchmark next to them measures them too. @returns their last sampled CPU %.
 */
export async function waitForQuiet(maxMs = 60_000, thresholdPct = 15): Promise<number> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const m0 = machineBusyMs();
    const c0 = process.cpuUsage();
    const k0 = childCpuMs();
    const t0 = performance.now();
    await delay(1_000);
    const wall = performance.now() - t0;
    const used = process.cpuUsage(c0);
    const own = (used.user + used.system) / 1000 + (childCpuMs() - k0);
    const others = ((machineBusyMs() - m0 - own) / wall) * 100;
    if (others < thresholdPct || Date.now() > deadline) return Math.round(others);
  }
}

/** CPU time (user+system, ms) of reaped child processes, from /proc/self/stat (Linux). */
export function childCpuMs(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command: state is field 3; cutime and cstime are fields 16 and 17 (1-based).
    const cutime = Number(fields[13]);
    const cstime = Number(fields[14]);
    return ((cutime + cstime) * 1000) / 100; // USER_HZ = 100 on Linux
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user+system, own and reaped children, ms) of another process, from /proc. */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Emulator child processes of this process: pid → "dynamodb" | "sqs" (Linux /proc). */
export function emulatorPids(): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== process.pid) continue;
      const m = /emulator-main\.ts .* (dynamodb|sqs)\s*$/.exec(
        readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0").join(" "),
      );
      if (m) out.set(Number(e), m[1] as string);
    } catch {}
  }
  return out;
}

/**
 * The package as `npm pack` makes it, built once per test run and shared by every test file
 * that needs it (the package-install and CDK-app tests). It is packed from a copy of the working
 * tree (the files git tracks or would track, node_modules linked), so that the build's
 * `rm -rf dist` and console build never disturb tests running from the repository at the same
 * time. The first caller builds, the others wait for it (a lock directory in the run's pack
 * directory, from the global set-up).
 */
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { inject } from "vitest";
import { until } from "./poll.js";
import { REPO } from "./standalone.js";

/** What packing produced, and what it took. */
export interface PackedTarball {
  /** Absolute path of the .tgz. */
  file: string;
  /** Size of the .tgz, bytes. */
  bytes: number;
  /** Time `npm pack` took (build included), ms. */
  packMs: number;
}

function copyWorkingTree(to: string): void {
  const listed = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], {
    cwd: REPO,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const rel of listed.split("\0")) {
    if (!rel || !existsSync(join(REPO, rel))) continue; // deleted but still tracked
    mkdirSync(dirname(join(to, rel)), { recursive: true });
    cpSync(join(REPO, rel), join(to, rel));
  }
  symlinkSync(join(REPO, "node_modules"), join(to, "node_modules"), "dir");
}

function pack(dir: string): PackedTarball {
  const src = join(dir, "src");
  copyWorkingTree(src);
  const started = performance.now();
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", dir], {
    cwd: src,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const packMs = performance.now() - started;
  // npm prints the lifecycle scripts' output before the JSON answer.
  const json = JSON.parse(out.slice(out.indexOf("[\n"))) as Array<{
    filename: string;
    size: number;
  }>;
  const first = json[0];
  if (!first) throw new Error(`npm pack answered nothing: ${out}`);
  return { file: join(dir, first.filename), bytes: first.size, packMs };
}

/**
 * The packed tarball of this working tree (built on first call in the run, ~1 minute).
 * @throws Error when packing failed (in this or another test file), with npm's output.
 */
export async function packedTarball(): Promise<PackedTarball> {
  const dir = inject("packDir");
  const result = join(dir, "result.json");
  const failed = join(dir, "failed.txt");
  let mine = false;
  try {
    mkdirSync(join(dir, "lock"));
    mine = true;
  } catch {}
  if (mine) {
    try {
      writeFileSync(result, JSON.stringify(pack(dir)));
    } catch (e) {
      const err = e as { message: string; stdout?: string; stderr?: string };
      writeFileSync(failed, `${err.message}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`);
    }
  }
  await until(() => existsSync(result) || existsSync(failed), {
    timeoutMs: 300_000,
    intervalMs: 500,
    what: "the package to be packed",
  });
  if (existsSync(failed)) throw new Error(`npm pack failed: ${readFileSync(failed, "utf8")}`);
  return JSON.parse(readFileSync(result, "utf8")) as PackedTarball;
}

/** Files of a directory, recursively, relative to it (for asserting what a package holds). */
export function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(dir, join(prefix, e.name)) : [join(prefix, e.name)],
  );
}

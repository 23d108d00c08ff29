/**
 * `npm run notices` (run by `prepack`): writes THIRD-PARTY-NOTICES.txt, the licence texts of the
 * third-party code the package carries or installs:
 * - the production dependency tree (package-lock.json without dev packages), installed beside
 *   Shoal;
 * - the packages bundled into the built console (console/dist) and the Lambda bundles
 *   (dist/lambda), found through their source maps' `sources` (node_modules/<name>/…), since
 *   their code ships inside Shoal's own files.
 * Fails when a package has neither a licence file nor a `license` field, so nothing ships
 * unaccounted for.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const OUT = join(ROOT, "THIRD-PARTY-NOTICES.txt");

/**
 * Package directories (under node_modules) of the production dependency tree, from
 * package-lock.json: every installed package npm does not mark `dev` (nor `devOptional`).
 */
function productionTree(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean; link?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, p]) => path !== "" && !p.dev && !p.devOptional && !p.link)
    .map(([path]) => join(ROOT, path))
    .filter((dir) => existsSync(join(dir, "package.json")));
}

function mapFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...mapFiles(path));
    else if (name.endsWith(".map")) found.push(path);
  }
  return found;
}

/** Package directories whose files a source map lists (the code bundled into Shoal's files). */
function bundledPackages(dirs: string[]): string[] {
  const names = new Set<string>();
  for (const file of dirs.flatMap(mapFiles)) {
    const map = JSON.parse(readFileSync(file, "utf8")) as { sources?: string[] };
    for (const source of map.sources ?? []) {
      // The whole node_modules path, nested ones included (`a/node_modules/b` is b, inside a).
      const m = /((?:node_modules\/(?:@[^/]+\/)?[^/]+\/)+)/.exec(source);
      if (m?.[1]) names.add(m[1].slice(0, -1));
    }
  }
  return [...names].map((n) => join(ROOT, n)).filter((d) => existsSync(join(d, "package.json")));
}

/**
 * Data that is not a package: examples/montage.yaml is generated from a WfCommons trace
 * (examples/wfcommons/README.md), licensed LGPL-3.0, which supplements the GPL-3.0.
 */
const DATA = [
  {
    head: "examples/montage.yaml: derived from WfCommons WfInstances' Montage trace (pegasus/montage, https://github.com/wfcommons/WfInstances), GNU LGPL v3",
    files: ["examples/wfcommons/LICENSE.LGPL-3.0.txt", "examples/wfcommons/LICENSE.GPL-3.0.txt"],
  },
];

const LICENCE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt|markdown))?$/i;

/** One package's heading and its licence text (the files joined, or the `license` field). */
function notice(dir: string): { id: string; head: string; text: string } {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    name: string;
    version: string;
    license?: string;
    repository?: string | { url?: string };
  };
  const files = readdirSync(dir).filter((f) => LICENCE_FILE.test(f));
  const texts = files.map((f) => readFileSync(join(dir, f), "utf8").trim());
  if (texts.length === 0 && !pkg.license)
    throw new Error(`${pkg.name}@${pkg.version}: no licence file and no license field`);
  const repo = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  const id = `${pkg.name}@${pkg.version}`;
  return {
    id,
    head: `${id} (${pkg.license ?? "see the text"})${repo ? ` ${repo}` : ""}`,
    text: texts.length ? texts.join("\n\n") : `(${pkg.license}; the package has no licence file)`,
  };
}

const dirs = [
  ...productionTree(),
  ...bundledPackages([join(ROOT, "console", "dist"), join(ROOT, "dist", "lambda")]),
];
// Packages under the same text (the AWS SDK's ~100 packages share one Apache-2.0 file) are
// listed together above it once.
const byText = new Map<string, Map<string, string>>();
for (const dir of dirs) {
  const n = notice(dir);
  const heads = byText.get(n.text) ?? new Map<string, string>();
  heads.set(n.id, n.head);
  byText.set(n.text, heads);
}
const groups = [...byText.entries()]
  .map(([text, heads]) => ({
    text,
    heads: [...heads.entries()].sort(([a], [b]) => a.localeCompare(b)),
  }))
  .sort((a, b) => (a.heads[0]?.[0] ?? "").localeCompare(b.heads[0]?.[0] ?? ""));
const count = groups.reduce((n, g) => n + g.heads.length, 0);
const rule = "-".repeat(78);
writeFileSync(
  OUT,
  [
    "Third-party software in or installed with Shoal",
    `${count} packages: the production dependencies, and the packages bundled into the`,
    "console and the Lambda bundles; then data the examples derive from.",
    "",
    ...groups.flatMap((g) => [rule, ...g.heads.map(([, head]) => head), "", g.text, ""]),
    ...DATA.flatMap((d) => [
      rule,
      d.head,
      "",
      ...d.files.map((f) => readFileSync(join(ROOT, f), "utf8").trim()),
      "",
    ]),
  ].join("\n"),
);
process.stdout.write(`wrote ${OUT} (${count} packages, ${groups.length} licence texts)\n`);

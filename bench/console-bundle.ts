/**
 * The console's bundle sizes (issue 13: initial JS under ~400 KB gzipped, the graph lazy-loaded):
 * every file of the build's assets/ with its raw and gzip size, and which of them the first page
 * load needs. Initial files come from Vite's manifest (.vite/manifest.json) when the build writes
 * one, otherwise from index.html's <script>/<link> tags plus the static imports of those scripts.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** One file of assets/: sizes in bytes; `initial` when the first page load fetches it. */
export interface AssetSize {
  file: string;
  raw: number;
  gzip: number;
  kind: "initial" | "lazy" | "map";
}

/** The sizes of a console build, in bytes. */
export interface BundleSizes {
  assets: AssetSize[];
  /** How the initial files were found. */
  source: "manifest" | "index.html";
  initialJs: { raw: number; gzip: number };
  lazyJs: { raw: number; gzip: number };
}

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  css?: string[];
}

/** Files (relative to the build dir) the entry chunks of a Vite manifest load up front. */
function initialFromManifest(manifest: Record<string, ManifestChunk>): Set<string> {
  const out = new Set<string>();
  const visit = (key: string) => {
    const c = manifest[key];
    if (!c || out.has(c.file)) return;
    out.add(c.file);
    for (const css of c.css ?? []) out.add(css);
    for (const i of c.imports ?? []) visit(i); // static imports only (not dynamicImports)
  };
  for (const [key, c] of Object.entries(manifest)) if (c.isEntry) visit(key);
  return out;
}

// A minified static import: `import{a as b}from"./x.js"`, `import"./x.js"`, `export*from"./x.js"`;
// `import("./x.js")` (lazy) has a parenthesis and does not match.
const STATIC_IMPORT =
  /(?:^|[;}\n])\s*(?:import|export)\s*(?:[\w$*{},\s]+?from\s*)?["']([^"']+)["']/g;

/** Files index.html loads, plus the static imports of its scripts, relative to the build dir. */
function initialFromHtml(dir: string): Set<string> {
  const html = readFileSync(join(dir, "index.html"), "utf8");
  const out = new Set<string>();
  const scripts: string[] = [];
  const tag = /<(script|link)\b[^>]*>/g;
  for (const m of html.matchAll(tag)) {
    const t = m[0];
    const url = /\b(?:src|href)="([^"]+)"/.exec(t)?.[1];
    if (!url || /^[a-z]+:/i.test(url)) continue;
    const rel = /\brel="([^"]+)"/.exec(t)?.[1];
    if (m[1] === "link" && !["stylesheet", "modulepreload"].includes(rel ?? "")) continue;
    const file = url.replace(/^\//, "");
    out.add(file);
    if (file.endsWith(".js")) scripts.push(file);
  }
  while (scripts.length) {
    const file = scripts.pop() as string;
    if (!existsSync(join(dir, file))) continue;
    const base = file.slice(0, file.lastIndexOf("/") + 1);
    for (const m of readFileSync(join(dir, file), "utf8").matchAll(STATIC_IMPORT)) {
      const spec = m[1] as string;
      if (!spec.startsWith(".") && !spec.startsWith("/")) continue;
      const target = spec.startsWith("/") ? spec.slice(1) : join(base, spec);
      if (!out.has(target)) {
        out.add(target);
        scripts.push(target);
      }
    }
  }
  return out;
}

/** Raw and gzip sizes (bytes) of every file of `<dir>/assets`, initial and lazy JS totals. */
export function bundleSizes(dir: string): BundleSizes {
  const manifestFile = join(dir, ".vite", "manifest.json");
  const source = existsSync(manifestFile) ? "manifest" : "index.html";
  const initial =
    source === "manifest"
      ? initialFromManifest(JSON.parse(readFileSync(manifestFile, "utf8")))
      : initialFromHtml(dir);
  const assetsDir = join(dir, "assets");
  const assets: AssetSize[] = readdirSync(assetsDir)
    .filter((f) => statSync(join(assetsDir, f)).isFile())
    .sort()
    .map((f) => {
      const bytes = readFileSync(join(assetsDir, f));
      const kind = f.endsWith(".map") ? "map" : initial.has(`assets/${f}`) ? "initial" : "lazy";
      return { file: f, raw: bytes.length, gzip: gzipSync(bytes).length, kind };
    });
  const sum = (kind: AssetSize["kind"]) => {
    const js = assets.filter((a) => a.kind === kind && a.file.endsWith(".js"));
    return { raw: js.reduce((s, a) => s + a.raw, 0), gzip: js.reduce((s, a) => s + a.gzip, 0) };
  };
  return { assets, source, initialJs: sum("initial"), lazyJs: sum("lazy") };
}

#!/usr/bin/env node
// Entry point of the `shoal` CLI. Plain JavaScript so the Node version check runs before
// anything that needs a newer Node. The installed package runs the compiled CLI (dist/); the
// repository, where the TypeScript sources sit beside this file, runs them through tsx, so a
// change is live without a build and a stale dist/ is never used.
import { existsSync } from "node:fs";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`shoal needs Node.js >= 22.12 (found ${process.versions.node}); see README`);
  process.exit(1);
}

// fauxqs persists through node:sqlite, which Node 22 flags as experimental on every start.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name === "ExperimentalWarning" && /SQLite/i.test(w.message)) return;
  console.error(`${w.name}: ${w.message}`);
});

// Resolved from this file's real location, so it also works through node_modules/.bin symlinks.
const sources = new URL("../lib/cli/main.ts", import.meta.url);
let main;
if (existsSync(sources)) {
  const { register } = await import("tsx/esm/api");
  register();
  main = sources;
} else main = new URL("../dist/lib/cli/main.js", import.meta.url);
const { runCli } = await import(main.href);
await runCli();

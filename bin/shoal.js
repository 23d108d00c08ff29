#!/usr/bin/env node
// Entry point of the `shoal` CLI. Plain JavaScript so the Node version check runs before
// anything that needs a newer Node; the CLI itself is TypeScript, loaded through tsx.
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

const { register } = await import("tsx/esm/api");
register();
// Resolved from this file's real location, so it also works through node_modules/.bin symlinks.
const { runCli } = await import(new URL("../lib/cli/main.ts", import.meta.url).href);
await runCli();

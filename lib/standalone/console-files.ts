/**
 * The console's static files (console/dist, built by `npm run build:console`), served by
 * standalone's HTTP server at `/` beside the API's `/v1/` paths. Every path that is not a file is
 * answered with index.html, so the console's own URLs (`/instances/<id>?task=a`) load on reload.
 * Served by `sirv` (immutable caching of the hashed assets, ETags, HEAD). `/favicon.ico`, which
 * browsers and bookmark tools ask for whatever the page links, is the console's SVG icon.
 */
import { existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import sirv from "sirv";
import { PACKAGE_ROOT } from "../package-root.js";

/** Where the built console lives inside Shoal's install. */
export const CONSOLE_DIR = join(PACKAGE_ROOT, "console", "dist");

/** Answers a request for the console; true when it took it (GET or HEAD outside `/v1`). */
export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * A handler serving the console from `dir`. When the console was not built there, its pages say
 * how to build it (plain text, 404) instead of a blank page.
 */
export function consoleFiles(dir: string = CONSOLE_DIR): ConsoleHandler {
  const built = existsSync(`${dir}/index.html`);
  const serve = built ? sirv(dir, { single: true, etag: true, immutable: false }) : undefined;
  return (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/v1" || path.startsWith("/v1/")) return false;
    // The page links /favicon.svg (console/public); asked for the .ico, answer with the same icon
    // (its content type says SVG, which browsers take for an icon) rather than a 404.
    if (path === "/favicon.ico") req.url = "/favicon.svg";
    if (!serve) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end(
        `The Shoal console is not built in ${dir}.\nBuild it with: npm run build:console\nThe API is under /v1/ (GET /v1/health).\n`,
      );
      return true;
    }
    serve(req, res, () => {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("not found\n");
    });
    return true;
  };
}

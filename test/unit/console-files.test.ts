/** standalone's serving of the console (lib/standalone/console-files.ts) beside the API. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { consoleFiles } from "../../lib/standalone/console-files.js";

let server: Server | undefined;

/** A server that answers what the console handler does not take with `api`. */
async function serve(dir: string): Promise<string> {
  const handle = consoleFiles(dir);
  server = createServer((req, res) => {
    if (handle(req, res)) return;
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"api":true}');
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await new Promise((r) => server?.close(r));
});

describe("the console's files", () => {
  it("serves index.html at / and at the console's own paths, and leaves /v1 to the API", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-console-files-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), "<html>console</html>");
    writeFileSync(join(dir, "assets", "app-1a2b.js"), "console.log(1)");
    const url = await serve(dir);
    for (const path of ["/", "/instances", "/instances/abc?task=x"]) {
      const res = await fetch(url + path);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("console");
    }
    expect(await (await fetch(`${url}/assets/app-1a2b.js`)).text()).toBe("console.log(1)");
    expect(await (await fetch(`${url}/v1/health`)).json()).toEqual({ api: true });
    expect(await (await fetch(`${url}/v1`)).json()).toEqual({ api: true });
    expect(await (await fetch(`${url}/`, { method: "POST" })).json()).toEqual({ api: true });
  });

  it("answers /favicon.ico with the console's SVG icon, not a 404", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-console-icon-"));
    writeFileSync(join(dir, "index.html"), "<html>console</html>");
    writeFileSync(join(dir, "favicon.svg"), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    const url = await serve(dir);
    for (const path of ["/favicon.ico", "/favicon.ico?v=2", "/favicon.svg"]) {
      const res = await fetch(url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/svg+xml");
      expect(await res.text()).toBe('<svg xmlns="http://www.w3.org/2000/svg"/>');
    }
    expect((await fetch(`${url}/favicon.ico`, { method: "HEAD" })).status).toBe(200);
  });

  it("says how to build the console when it was not built", async () => {
    const url = await serve(mkdtempSync(join(tmpdir(), "shoal-console-none-")));
    const res = await fetch(`${url}/`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("npm run build:console");
    expect(await (await fetch(`${url}/v1/health`)).json()).toEqual({ api: true });
  });
});

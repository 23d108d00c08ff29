import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeConsole,
  HAVE_CHROMIUM,
  openConsole,
  shot,
  warnWithoutChromium,
} from "../helpers/browser.js";
import { until } from "../helpers/poll.js";
import { api, type RunningStandalone } from "../helpers/standalone.js";

warnWithoutChromium("console tests");

/** What the graph test reads of an element in the browser (the tests compile without DOM types). */
interface Measured {
  textContent: string | null;
  scrollWidth: number;
  clientWidth: number;
  parentElement: Measured | null;
  querySelector(selector: string): Measured | null;
  getBoundingClientRect(): { left: number; right: number };
}

describe.skipIf(!HAVE_CHROMIUM)("the console", () => {
  let sa: RunningStandalone;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ sa, browser, page } = await openConsole({ name: "main", examples: true }));
  }, 60_000);

  afterAll(() => closeConsole({ sa, browser }));

  it("opens at /, with the health of the API it talks to", async () => {
    await page.goto(sa.url);
    await page.waitForURL(/\/instances$/);
    await expect.poll(() => page.getByRole("status").textContent()).toContain("ok");
    expect(await page.locator("header .endpoint").textContent()).toBe(`${sa.url}/v1`);
    expect(await page.locator("header .version").textContent()).toMatch(/^v\d+\.\d+\.\d+/);
  });

  it("starts a workflow from the Run form and shows it succeed", async () => {
    await page.goto(`${sa.url}/workflows`);
    const row = page.getByRole("row", { name: /etl-report/ });
    await row.getByRole("button", { name: "Run…" }).click();
    await page.getByLabel("Priority").selectOption("HIGH");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForURL(/\/instances\/[0-9a-f-]{36}$/);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("SUCCESS");
    // Every task of the DAG is listed, each SUCCESS.
    const states = await page.locator("table.tasks tbody tr .state").allTextContents();
    expect(states.length).toBeGreaterThan(3);
    expect(states.every((s) => s.includes("SUCCESS"))).toBe(true);
    await shot(page, "instance-success");
    // And the list shows it, linked.
    await page.getByRole("link", { name: "Instances" }).first().click();
    await expect.poll(() => page.locator("table.list tbody tr").count()).toBeGreaterThan(0);
    await shot(page, "instances");
  });

  it("draws the instance's graph and Gantt chart, and a node opens its task", async () => {
    const run = await api(sa.url, "POST", "/v1/workflows/etl-report/runs", {});
    await page.goto(`${sa.url}/instances/${run.body.instanceId}?view=graph`);
    const graph = page.getByRole("figure", { name: /graph of \d+ tasks/ });
    await expect
      .poll(() => graph.locator(".dag-node").count(), { timeout: 15_000 })
      .toBeGreaterThan(3);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("SUCCESS");
    // Every node turns SUCCESS without a reload.
    await expect
      .poll(async () =>
        (await graph.locator(".dag-node .state").allTextContents()).every((s) =>
          s.includes("SUCCESS"),
        ),
      )
      .toBe(true);
    await shot(page, "instance-graph");
    const first = await graph.locator(".dag-node .dag-code").first().textContent();
    await graph.locator(".dag-node").first().click();
    await expect
      .poll(() => page.getByRole("complementary").locator("h2").textContent())
      .toBe(first);
    await page.getByRole("tab", { name: "Gantt" }).click();
    const gantt = page.getByRole("figure", { name: /Gantt chart of \d+ tasks/ });
    await expect.poll(() => gantt.locator("rect.bar").count()).toBeGreaterThan(3);
    expect(await gantt.locator("figcaption").textContent()).toMatch(/Critical path: \S+/);
    await shot(page, "instance-gantt");
    // The grid: the workflow's last runs × its tasks; the number of runs is remembered.
    await page.getByRole("tab", { name: "Grid" }).click();
    const grid = page.getByRole("figure", { name: /grid of \d+ runs/ });
    await expect.poll(() => grid.locator("button.cell").count()).toBeGreaterThan(7);
    await grid.getByLabel("runs shown").selectOption("10");
    await page.reload();
    await expect.poll(() => grid.getByLabel("runs shown").inputValue()).toBe("10");
    const cells = await grid
      .locator("td.current button.cell")
      .evaluateAll((b) => b.map((x) => x.getAttribute("aria-label") ?? ""));
    expect(cells.length).toBeGreaterThan(3);
    expect(cells.every((c) => c.endsWith("SUCCESS"))).toBe(true);
    await shot(page, "instance-grid");
  });

  it("filters the list from the URL, and shows a refused filter as the API's message", async () => {
    const run = await api(sa.url, "POST", "/v1/workflows/etl-report/runs", {});
    const id = run.body.instanceId as string;
    await page.goto(`${sa.url}/instances`);
    const search = page.getByLabel("Id contains");
    await search.fill(id.slice(0, 8));
    await search.press("Enter");
    await page.waitForURL(new RegExp(`q=${id.slice(0, 8)}`));
    await expect
      .poll(() => page.locator("table.list tbody tr").count(), { timeout: 10_000 })
      .toBe(1);
    expect(await page.locator("table.list tbody tr a").first().textContent()).toBe(id.slice(0, 8));
    await page.goto(`${sa.url}/instances?q=${encodeURIComponent("no spaces!")}`);
    await expect
      .poll(() => page.getByRole("alert").textContent(), { timeout: 10_000 })
      .toMatch(/q.*HTTP 400/);
  });

  it("opens a failed task's log", async () => {
    const put = await api(sa.url, "PUT", "/v1/workflows/console-fails", {
      tasks: [
        { code: "ok", type: "SHELL", command: "echo fine" },
        { code: "boom", type: "SHELL", command: "echo the-marker-line; exit 3", upstream: ["ok"] },
      ],
    });
    expect(put.status).toBe(201);
    const run = await api(sa.url, "POST", "/v1/workflows/console-fails/runs", {});
    expect(run.status).toBe(202);
    await page.goto(`${sa.url}/instances/${run.body.instanceId}`);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("FAILURE");
    await page.getByRole("row", { name: /boom/ }).click();
    const log = page.getByRole("region", { name: "log" });
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("the-marker-line");
    expect(await page.getByRole("complementary").textContent()).toContain("exited with code 3");
    // The chosen task is in the URL: a reload shows the same panel.
    await page.reload();
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("the-marker-line");
    await shot(page, "failed-task-log");
    // Force success, confirmed: the attempt becomes FORCED_SUCCESS.
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "force success" }).click();
    await expect
      .poll(() => page.getByRole("complementary").locator("table .state").first().textContent(), {
        timeout: 10_000,
      })
      .toContain("FORCED SUCCESS");
  });

  it("stops a running instance after a confirmation", async () => {
    await api(sa.url, "PUT", "/v1/workflows/console-sleeps", {
      tasks: [{ code: "nap", type: "SHELL", command: "sleep 60" }],
    });
    const run = await api(sa.url, "POST", "/v1/workflows/console-sleeps/runs", {});
    await page.goto(`${sa.url}/instances/${run.body.instanceId}`);
    await expect
      .poll(() => page.locator("table.tasks .state").first().textContent(), { timeout: 30_000 })
      .toContain("RUNNING");
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "stop" }).click();
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("STOPPED");
    await shot(page, "instance-stopped");
  });

  it("shows a long-running task's duration whole in its graph node", async () => {
    await api(sa.url, "PUT", "/v1/workflows/console-long-child", {
      tasks: [{ code: "nap", type: "SHELL", command: "sleep 120" }],
    });
    await api(sa.url, "PUT", "/v1/workflows/console-long", {
      tasks: [
        { code: "load_the_warehouse_tables", type: "SHELL", command: "sleep 120" },
        { code: "child", type: "SUB_WORKFLOW", workflow: "console-long-child" },
      ],
    });
    const run = await api(sa.url, "POST", "/v1/workflows/console-long/runs", {});
    const id = run.body.instanceId as string;
    // Both running, with their start times; the browser's clock then reads 103 minutes later.
    const starts = await until(
      async () => {
        const got = await api(sa.url, "GET", `/v1/instances/${id}`);
        const tasks = (got.body.tasks ?? []) as Array<{ state: string; startedAt?: string }>;
        return tasks.length === 2 && tasks.every((t) => t.state === "RUNNING" && t.startedAt)
          ? tasks.map((t) => Date.parse(t.startedAt as string))
          : undefined;
      },
      { timeoutMs: 30_000, what: "both tasks RUNNING" },
    );
    const later = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await later.clock.setFixedTime(Math.max(...starts) + 103 * 60_000);
      await later.goto(`${sa.url}/instances/${id}?view=graph`);
      const graph = later.getByRole("figure", { name: /graph of 2 tasks/ });
      const durations = graph.locator(".dag-node .dag-duration");
      await expect
        .poll(() => durations.allTextContents(), { timeout: 15_000 })
        .toEqual(["1 h 43 min", "1 h 43 min"]);
      // Whole: nothing of it overflows its own box, its row's (which clips) or its node's.
      const fits = await graph.locator(".dag-node").evaluateAll((nodes) =>
        nodes.map((el) => {
          const n = el as unknown as Measured;
          const d = n.querySelector(".dag-duration") as Measured;
          const row = (d.parentElement as Measured).getBoundingClientRect();
          const box = d.getBoundingClientRect();
          const node = n.getBoundingClientRect();
          return {
            text: d.textContent,
            unclipped: d.scrollWidth <= d.clientWidth,
            inRow: box.left >= row.left - 0.5 && box.right <= row.right + 0.5,
            inNode: box.left >= node.left && box.right <= node.right,
          };
        }),
      );
      expect(fits).toEqual([
        { text: "1 h 43 min", unclipped: true, inRow: true, inNode: true },
        { text: "1 h 43 min", unclipped: true, inRow: true, inNode: true },
      ]);
      await shot(later, "graph-long-running");
    } finally {
      await later.close();
      await api(sa.url, "POST", `/v1/instances/${id}/stop`);
    }
  });

  it("has an icon: /favicon.ico answers, and a page loads with no console error", async () => {
    const ico = await fetch(`${sa.url}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get("content-type")).toBe("image/svg+xml");
    expect(await ico.text()).toMatch(/^<svg /);
    const fresh = await browser.newPage();
    const errors: string[] = [];
    fresh.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    fresh.on("pageerror", (e) => errors.push(String(e)));
    fresh.on("response", (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });
    try {
      await fresh.goto(`${sa.url}/workflows`);
      await expect.poll(() => fresh.getByRole("status").textContent()).toContain("ok");
      const href = await fresh.locator('link[rel="icon"]').getAttribute("href");
      const icon = await fresh.request.get(new URL(href ?? "", sa.url).href);
      expect(icon.status()).toBe(200);
      expect(icon.headers()["content-type"]).toBe("image/svg+xml");
      expect(errors).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it("shows an unknown instance as the API's message, not a blank page", async () => {
    await page.goto(`${sa.url}/instances/00000000-0000-0000-0000-000000000000`);
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toMatch(/instance .00000000-0000-0000-0000-000000000000.*HTTP 404/);
  });
});

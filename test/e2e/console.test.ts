import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeConsole,
  HAVE_CHROMIUM,
  openConsole,
  shot,
  warnWithoutChromium,
} from "../helpers/browser.js";
import { api, type RunningStandalone } from "../helpers/standalone.js";

warnWithoutChromium("console tests");

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

  it("shows an unknown instance as the API's message, not a blank page", async () => {
    await page.goto(`${sa.url}/instances/00000000-0000-0000-0000-000000000000`);
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toMatch(/instance .00000000-0000-0000-0000-000000000000.*HTTP 404/);
  });
});

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

warnWithoutChromium("console workflow tests");

describe.skipIf(!HAVE_CHROMIUM)("the console's workflow pages", () => {
  let sa: RunningStandalone;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ sa, browser, page } = await openConsole({ name: "wf", examples: true }));
  }, 60_000);

  afterAll(() => closeConsole({ sa, browser }));

  it("lists the workflows with their last runs, and opens one's DAG and a task's definition", async () => {
    const run = await api(sa.url, "POST", "/v1/workflows/etl-report/runs", {});
    expect(run.status).toBe(202);
    const yearly = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "etl-report",
      cron: "0 0 1 1 *",
      timezone: "Europe/Paris",
    });
    expect(yearly.status).toBe(201);
    // The run's instance exists once the dispatcher took its command: the list shows it only
    // then (and, with nothing running yet, would not look again for a minute).
    await until(
      async () =>
        (await api(sa.url, "GET", `/v1/instances/${run.body.instanceId}`)).status === 200 ||
        undefined,
      { timeoutMs: 20_000, what: "the run's instance to exist" },
    );
    await page.goto(`${sa.url}/workflows`);
    const row = page.getByRole("row", { name: /etl-report/ });
    // The next fire of its ONLINE schedule, in the schedule's zone: 1 January, midnight.
    await expect
      .poll(() => row.textContent(), { timeout: 10_000 })
      .toMatch(/\d{4}-01-01 00:00:00 \+01:00 \(Europe\/Paris\)/);
    // The run just started shows as a dot linking to its instance, its state as its name.
    await expect
      .poll(() => row.locator("a.run-dot").first().getAttribute("href"), { timeout: 15_000 })
      .toBe(`/instances/${run.body.instanceId}`);
    expect(await row.locator("a.run-dot").first().getAttribute("aria-label")).toMatch(
      /^(SUBMITTED|RUNNING|SUCCESS) instance/,
    );
    await row.getByRole("link", { name: "etl-report", exact: true }).click();
    await page.waitForURL(/\/workflows\/etl-report$/);
    const graph = page.getByRole("figure", { name: /graph of \d+ tasks/ });
    await expect
      .poll(() => graph.locator(".dag-node").count(), { timeout: 15_000 })
      .toBeGreaterThan(3);
    await graph.locator(".dag-node", { hasText: "aggregate" }).click();
    await page.waitForURL(/task=aggregate/);
    const panel = page.getByRole("complementary", { name: "task aggregate" });
    expect(await panel.locator("h2").textContent()).toBe("aggregate");
    expect(await panel.textContent()).toContain("transform_north");
    await shot(page, "workflow-graph");
    await page.getByRole("tab", { name: "Schedules & triggers" }).click();
    await expect
      .poll(() => page.getByRole("link", { name: yearly.body.id.slice(0, 8) }).getAttribute("href"))
      .toBe(`/schedules/${yearly.body.id}`);
    await page.getByRole("tab", { name: "YAML" }).click();
    await expect
      .poll(() => page.locator("pre.yaml-text").textContent())
      .toMatch(/tasks:\n\s+- code: generate/);
  });

  it("diffs two versions, the changed line marked", async () => {
    const v1 = await api(sa.url, "GET", "/v1/workflows/etl-report");
    const { name: _n, version: _v, createdAt: _c, releaseState: _r, ...definition } = v1.body;
    const put = await api(sa.url, "PUT", "/v1/workflows/etl-report", {
      ...definition,
      description: "Sales ETL, version two",
    });
    expect(put.status).toBe(201);
    const latest = put.body.version as number;
    await page.goto(`${sa.url}/workflows/etl-report?view=versions&from=${latest - 1}&to=${latest}`);
    const diff = page.getByRole("figure", { name: `diff of version ${latest - 1} to ${latest}` });
    await expect
      .poll(() => diff.locator(".diff-add").allTextContents(), { timeout: 10_000 })
      .toContain("+ description: Sales ETL, version two\n");
    expect((await diff.locator(".diff-del").allTextContents()).join("")).toMatch(/^- description:/);
    await expect
      .poll(() => page.getByRole("link", { name: `view version ${latest - 1}` }).count())
      .toBe(1);
    await shot(page, "workflow-diff");
    // Viewing the older version: the graph follows ?version=.
    await page.getByRole("link", { name: `view version ${latest - 1}` }).click();
    await page.waitForURL(new RegExp(`version=${latest - 1}`));
    await expect
      .poll(() => page.locator("dl.facts").textContent())
      .toContain(`version ${latest - 1}`);
  });

  it("runs from a chosen start task, only that task", async () => {
    await page.goto(`${sa.url}/workflows/etl-report`);
    await page.getByRole("button", { name: "Run…" }).click();
    await page.getByLabel(/Start tasks/).selectOption(["generate"]);
    await page.getByLabel("Scope").selectOption("ONLY");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForURL(/\/instances\/[0-9a-f-]{36}$/);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("SUCCESS");
    const started = await page.locator("table.tasks tbody tr td.mono").allTextContents();
    expect(started).toEqual(["generate"]);
  });

  it("takes a workflow offline and back online, each confirmed", async () => {
    await page.goto(`${sa.url}/workflows/etl-report`);
    const release = page.locator("h1 .release");
    await expect.poll(() => release.textContent()).toContain("ONLINE");
    // Dismissed: nothing changes.
    page.once("dialog", (d) => void d.dismiss());
    await page.getByRole("button", { name: "Take offline" }).click();
    expect(await release.textContent()).toContain("ONLINE");
    page.once("dialog", (d) => {
      expect(d.message()).toMatch(/^Take etl-report OFFLINE\?/);
      void d.accept();
    });
    await page.getByRole("button", { name: "Take offline" }).click();
    await expect.poll(() => release.textContent()).toContain("OFFLINE");
    expect((await api(sa.url, "GET", "/v1/workflows/etl-report")).body.releaseState).toBe(
      "OFFLINE",
    );
    await page.goto(`${sa.url}/workflows`);
    await expect
      .poll(() =>
        page
          .getByRole("row", { name: /etl-report/ })
          .locator(".release")
          .textContent(),
      )
      .toContain("OFFLINE");
    await shot(page, "workflows");
    await page.goto(`${sa.url}/workflows/etl-report`);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Bring online" }).click();
    await expect.poll(() => release.textContent()).toContain("ONLINE");
  });

  it("shows a refused run as the API's message next to the form", async () => {
    await page.goto(`${sa.url}/workflows/etl-report`);
    await page.getByRole("button", { name: "Run…" }).click();
    await page.getByLabel(/Parameters/).fill("9lives=x");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect
      .poll(() => page.getByRole("form").getByRole("alert").textContent(), { timeout: 10_000 })
      .toMatch(/parameter names must match.*HTTP 400/);
  });
});

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

warnWithoutChromium("console admin tests");

describe.skipIf(!HAVE_CHROMIUM)("the console's task groups, triggers and events", () => {
  let sa: RunningStandalone;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ sa, browser, page } = await openConsole({ name: "admin", examples: true }));
  }, 60_000);

  afterAll(() => closeConsole({ sa, browser }));

  it("creates a task group, shows its slots in use, and a refused delete as the API's message", async () => {
    await page.goto(`${sa.url}/task-groups`);
    await expect.poll(() => page.locator("main").textContent()).toContain("No task groups yet");
    await page.getByRole("button", { name: "New task group…" }).click();
    const form = page.getByRole("form", { name: "new task group" });
    await form.getByLabel("Name").fill("console-db");
    await form.getByLabel(/Capacity/).fill("2");
    await form.getByLabel("Description").fill("loaders");
    await form.getByRole("button", { name: "Create" }).click();
    const row = page.getByRole("row", { name: /console-db/ });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("0 / 2");
    expect(await row.textContent()).toContain("loaders");

    // A capacity the API refuses shows its message; a good one replaces the settings.
    await row.getByRole("button", { name: "edit console-db" }).click();
    const edit = page.getByRole("form", { name: "edit task group console-db" });
    await edit.getByLabel(/Capacity/).fill("5000");
    await edit.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(() => edit.getByRole("alert").textContent(), { timeout: 10_000 })
      .toMatch(/capacity.*HTTP 400/);
    await edit.getByLabel(/Capacity/).fill("3");
    await edit.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("0 / 3");

    // A task holding a slot: the page shows it live, and a delete is refused (409).
    await api(sa.url, "PUT", "/v1/workflows/console-holds-slot", {
      tasks: [{ code: "hold", type: "SHELL", taskGroup: "console-db", command: "sleep 60" }],
    });
    const run = await api(sa.url, "POST", "/v1/workflows/console-holds-slot/runs", {});
    expect(run.status).toBe(202);
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain("1 / 3");
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: "delete console-db" }).click();
    await expect
      .poll(() => page.getByRole("alert").first().textContent(), { timeout: 10_000 })
      .toMatch(/holding a slot.*HTTP 409/);
    await shot(page, "task-groups");
    await api(sa.url, "POST", `/v1/instances/${run.body.instanceId}/stop`, {});
  });

  it("creates a trigger, sends a matching event, and shows the run it started", async () => {
    await page.goto(`${sa.url}/triggers`);
    await expect.poll(() => page.locator("main").textContent()).toContain("No triggers yet");
    await page.getByRole("button", { name: "New trigger…" }).click();
    const form = page.getByRole("form", { name: "new trigger" });
    await form.getByLabel("Workflow").fill("etl-report");
    // A pattern that is not JSON is said so before anything is sent; a bad one by the API.
    await form.getByLabel(/Event pattern/).fill("{nope");
    await form.getByRole("button", { name: "Create" }).click();
    await expect.poll(() => form.getByRole("alert").textContent()).toContain("not JSON");
    await form.getByLabel(/Event pattern/).fill('{"source": "console.test"}');
    await form.getByRole("button", { name: "Create" }).click();
    await expect
      .poll(() => form.getByRole("alert").textContent(), { timeout: 10_000 })
      .toMatch(/eventPattern.*HTTP 400/);
    await form
      .getByLabel(/Event pattern/)
      .fill('{"source": ["console.test"], "detail-type": ["Ping"]}');
    await form.getByLabel(/Parameters/).fill("rows=$.detail.rows");
    await form.getByRole("button", { name: "Create" }).click();
    const row = page.locator("table.triggers tbody tr").first();
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('"console.test"');
    expect(await row.getByRole("link", { name: "etl-report" }).getAttribute("href")).toBe(
      "/workflows/etl-report",
    );
    await expect.poll(() => row.textContent()).toContain("none yet");

    // "Test…" opens the Events page with the form prefilled from the pattern.
    await row.getByRole("link", { name: /send a test event/ }).click();
    await page.waitForURL(/\/events\?/);
    const send = page.getByRole("form", { name: "send an event" });
    expect(await send.getByLabel("Source").inputValue()).toBe("console.test");
    expect(await send.getByLabel("Detail type").inputValue()).toBe("Ping");
    await send.getByLabel(/Detail \(/).fill('{"rows": "500"}');
    await send.getByRole("button", { name: "Send" }).click();
    const sent = send.getByRole("status");
    await expect.poll(() => sent.textContent(), { timeout: 10_000 }).toMatch(/started [0-9a-f]{8}/);

    // The event is listed, its detail expandable; then the run's own events, naming the trigger.
    const events = page.locator("table.events");
    const ours = events.getByRole("row", { name: /console\.test/ });
    await expect.poll(() => ours.count(), { timeout: 10_000 }).toBe(1);
    expect(await ours.textContent()).toMatch(/started [0-9a-f]{8}/);
    await ours.getByText("detail", { exact: true }).click();
    await expect.poll(() => ours.locator("pre").textContent()).toContain('"rows": "500"');
    await expect
      .poll(() => events.getByRole("row", { name: /started by trigger/ }).count(), {
        timeout: 30_000,
      })
      .toBeGreaterThan(0);
    await shot(page, "events");

    // The trigger's last runs show the instance, and it succeeds.
    await page.getByRole("link", { name: "Triggers" }).first().click();
    const dot = page.locator("table.triggers ul.last-runs a").first();
    await expect
      .poll(() => dot.getAttribute("aria-label"), { timeout: 30_000 })
      .toMatch(/^SUCCESS/);
    expect(await dot.getAttribute("href")).toMatch(/^\/instances\/[0-9a-f-]{36}$/);
    await shot(page, "triggers");

    // Switched off after a confirmation: then it starts nothing, as the page says.
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("switch", { name: /trigger .* online/ }).click();
    await expect
      .poll(() => row.getByRole("switch").getAttribute("aria-checked"), { timeout: 10_000 })
      .toBe("false");
    const off = await api(sa.url, "POST", "/v1/events", {
      Entries: [{ Source: "console.test", DetailType: "Ping", Detail: '{"rows": "1"}' }],
    });
    expect(off.body.Entries[0].Triggers).toEqual([]);
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("switch", { name: /trigger .* online/ }).click();
    await expect
      .poll(() => row.getByRole("switch").getAttribute("aria-checked"), { timeout: 10_000 })
      .toBe("true");

    // Deleted after a confirmation.
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: /delete trigger/ }).click();
    await expect
      .poll(() => page.locator("main").textContent(), { timeout: 10_000 })
      .toContain("No triggers yet");
  });

  it("warns of a pattern that starts its own runs, and shows the loop it stopped", async () => {
    await api(sa.url, "PUT", "/v1/workflows/console-again", {
      tasks: [{ code: "t", type: "SHELL", command: "echo again" }],
    });
    await page.goto(`${sa.url}/triggers`);
    await page.getByRole("button", { name: "New trigger…" }).click();
    const form = page.getByRole("form", { name: "new trigger" });
    await form.getByLabel("Workflow").fill("console-again");
    await form
      .getByLabel(/Event pattern/)
      .fill(
        '{"source": ["shoal"], "detail-type": ["Shoal Workflow Instance State Change"], "detail": {"workflow": ["console-again"], "state": ["SUCCESS"]}}',
      );
    await form.getByRole("button", { name: "Create" }).click();
    const warning = page.getByRole("alert", { name: "trigger warnings" });
    await expect
      .poll(() => warning.textContent(), { timeout: 10_000 })
      .toMatch(/matches the events of the runs this trigger starts.*10 runs deep/);
    await api(sa.url, "POST", "/v1/workflows/console-again/runs", {});
    const row = page.locator("table.triggers tbody tr", { hasText: "console-again" });
    await expect
      .poll(() => row.textContent(), { timeout: 90_000, interval: 1_000 })
      .toMatch(/loop stopped 1 time: a run 11 triggers deep \(limit 10\)/);
    await shot(page, "triggers-loop-stopped");
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: /delete trigger/ }).click();
  }, 120_000);

  it("shows the API's answer on AWS (no recent events there) as a message, with the form", async () => {
    await page.route("**/v1/events/recent**", (r) =>
      r.fulfill({
        status: 404,
        contentType: "application/json",
        body: JSON.stringify({
          error: { code: "NotFound", message: "recent events are kept by `shoal standalone` only" },
        }),
      }),
    );
    await page.goto(`${sa.url}/events`);
    await expect
      .poll(() => page.getByRole("note").textContent(), { timeout: 10_000 })
      .toContain("kept by `shoal standalone` only");
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(await page.getByRole("form", { name: "send an event" }).isVisible()).toBe(true);
    await page.unroute("**/v1/events/recent**");
  });
});

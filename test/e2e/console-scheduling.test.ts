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

warnWithoutChromium("console scheduling tests");

/** The numbers of a backfill progress text: `1 done · 1 running · 0 failed · 2 pending of 4`. */
function counts(text: string | null): { done: number; running: number; pending: number } {
  const m = /(\d+) done · (\d+) running · \d+ failed · (\d+) pending/.exec(text ?? "");
  return {
    done: Number(m?.[1] ?? -1),
    running: Number(m?.[2] ?? -1),
    pending: Number(m?.[3] ?? -1),
  };
}

describe.skipIf(!HAVE_CHROMIUM)("the console's schedules and backfills", () => {
  let sa: RunningStandalone;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ sa, browser, page } = await openConsole({ name: "sched" }));
  }, 120_000);

  afterAll(() => closeConsole({ sa, browser }));

  it("shows an empty list as a sentence that says how to create one", async () => {
    await page.goto(`${sa.url}/schedules`);
    await expect
      .poll(() => page.locator("main .empty").textContent())
      .toContain("No schedules yet");
    await page.goto(`${sa.url}/backfills`);
    await expect
      .poll(() => page.locator("main .empty").textContent())
      .toContain("No backfills yet");
  });

  it("follows a schedule's fire ledger to its instance, and switches it offline", async () => {
    const put = await api(sa.url, "PUT", "/v1/workflows/console-tick", {
      tasks: [{ code: "tick", type: "SHELL", command: "echo tick" }],
    });
    expect(put.status).toBe(201);
    // The shortest timings: a rate of whole seconds (a 6-field cron has seconds too).
    const created = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "console-tick",
      rate: "2 seconds",
      timezone: "Asia/Kolkata",
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const nightly = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "console-tick",
      cron: "30 2 * * *",
      timezone: "America/New_York",
      overlapPolicy: "SERIAL_WAIT",
      state: "OFFLINE",
    });
    expect(nightly.status).toBe(201);

    await page.goto(`${sa.url}/schedules?workflow=console-tick`);
    const row = page.getByRole("row", { name: /rate 2 seconds/ });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("Asia/Kolkata");
    // The next fire on the schedule's wall clock (+05:30), and how soon.
    expect(await row.textContent()).toMatch(/\+05:30 (in \d+ s|now|due)/);
    expect(await row.getByRole("switch").getAttribute("aria-checked")).toBe("true");
    const cronRow = page.getByRole("row", { name: /cron 30 2 \* \* \*/ });
    expect(await cronRow.textContent()).toMatch(/none while offline/);
    expect(await cronRow.textContent()).toContain("SERIAL_WAIT");
    await shot(page, "schedules");

    await row.getByRole("link", { name: `schedule ${id.slice(0, 8)}` }).click();
    await page.waitForURL(new RegExp(`/schedules/${id}$`));
    const preview = page.getByRole("region", { name: "preview" });
    await expect.poll(() => preview.locator("li").count()).toBe(5);
    await preview.getByLabel("fires shown").selectOption("10");
    await expect.poll(() => preview.locator("li").count()).toBe(10);
    // The ledger fills by itself (polled), with a FIRED row linked to its instance.
    const ledger = page.getByRole("region", { name: "fire ledger" });
    const fired = ledger.locator("tbody tr.fire-fired");
    await expect.poll(() => fired.count(), { timeout: 30_000 }).toBeGreaterThan(1);
    expect(await fired.first().textContent()).toMatch(/FIRED/);
    expect(await fired.first().textContent()).toMatch(/on time|\d+ ms late|\d+\.\d s late/);
    await shot(page, "schedule-ledger");

    const fires = await api(sa.url, "GET", `/v1/schedules/${id}/fires?limit=1`);
    const first = fires.body.items[0].instanceId as string;
    await fired
      .first()
      .getByRole("link", { name: first.slice(0, 8) })
      .click();
    await page.waitForURL(new RegExp(`/instances/${first}$`));
    await expect
      .poll(() => page.locator("h1").textContent(), { timeout: 10_000 })
      .toContain("console-tick");

    // Back on the schedule, the switch puts it offline after a confirmation.
    await page.goBack();
    await page.waitForURL(new RegExp(`/schedules/${id}`));
    const toggle = page.locator("h1").getByRole("switch");
    await expect.poll(() => toggle.getAttribute("aria-checked")).toBe("true");
    page.once("dialog", (d) => void d.accept());
    await toggle.click();
    await expect
      .poll(async () => (await api(sa.url, "GET", `/v1/schedules/${id}`)).body.state, {
        timeout: 10_000,
      })
      .toBe("OFFLINE");
    await expect.poll(() => toggle.getAttribute("aria-checked")).toBe("false");
    await expect.poll(() => page.locator("dl.facts").textContent()).toContain("none while offline");
  }, 90_000);

  it("pauses, resumes and follows a backfill's progress", async () => {
    const put = await api(sa.url, "PUT", "/v1/workflows/console-slow", {
      tasks: [{ code: "nap", type: "SHELL", command: "sleep 2" }],
    });
    expect(put.status).toBe(201);
    const started = await api(sa.url, "POST", "/v1/workflows/console-slow/backfill", {
      from: "2026-11-01T00:00:00Z",
      to: "2026-11-04T00:00:00Z",
      cron: "0 0 * * *",
      mode: "SERIAL",
    });
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    expect(started.body.parallelism).toBe(1);

    await page.goto(`${sa.url}/backfills`);
    const row = page.getByRole("row", { name: new RegExp(id.slice(0, 8)) });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("of 4");
    expect(await row.textContent()).toContain("SERIAL");
    expect(await row.textContent()).toContain("2026-11-01 00:00:00 +00:00 … 2026-11-04");
    await shot(page, "backfills");
    await row.getByRole("link", { name: id.slice(0, 8) }).click();
    await page.waitForURL(new RegExp(`/backfills/${id}$`));

    // Pause, confirmed: nothing new starts.
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "pause" }).click();
    await expect.poll(() => page.locator("h1 .state").textContent()).toContain("PAUSED");
    expect((await api(sa.url, "GET", `/v1/backfills/${id}`)).body.state).toBe("PAUSED");
    const progress = page.locator("dl.facts .bf-text");
    // The run under way finishes and is counted; then it stays put.
    await expect
      .poll(async () => counts(await progress.textContent()).running, { timeout: 20_000 })
      .toBe(0);
    const paused = counts(await progress.textContent());
    expect(paused.pending).toBeGreaterThan(0);

    // Resume, confirmed: it goes on, and its instances show.
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "resume" }).click();
    await expect
      .poll(async () => counts(await progress.textContent()).done, { timeout: 30_000 })
      .toBeGreaterThan(paused.done);
    const instances = page.getByRole("region", { name: "instances of the backfill" });
    await expect
      .poll(() => instances.locator("tbody tr").count(), { timeout: 10_000 })
      .toBeGreaterThan(paused.done);
    await shot(page, "backfill");
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 40_000 })
      .toContain("SUCCESS");
    await expect.poll(() => instances.locator("tbody tr").count()).toBe(4);
  }, 120_000);

  it("shows a refused control (409) as the API's message", async () => {
    const started = await api(sa.url, "POST", "/v1/workflows/console-slow/backfill", {
      dates: ["2026-10-01T00:00:00Z", "2026-10-02T00:00:00Z"],
    });
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    await api(sa.url, "POST", `/v1/backfills/${id}/pause`);
    // Once its running run is counted the page has nothing to poll for.
    await expect
      .poll(async () => (await api(sa.url, "GET", `/v1/backfills/${id}`)).body.running, {
        timeout: 20_000,
      })
      .toBe(0);
    await page.goto(`${sa.url}/backfills/${id}`);
    await expect.poll(() => page.locator("h1 .state").textContent()).toContain("PAUSED");
    // Cancelled elsewhere meanwhile: the page still offers resume, and the API refuses it.
    expect((await api(sa.url, "POST", `/v1/backfills/${id}/cancel`)).status).toBe(202);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "resume" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent(), { timeout: 10_000 })
      .toMatch(/CANCELLED.*HTTP 409/);
  }, 60_000);

  it("shows an unknown schedule or backfill as the API's message", async () => {
    await page.goto(`${sa.url}/schedules/00000000-0000-0000-0000-000000000000`);
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/HTTP 404/);
    await page.goto(`${sa.url}/backfills/00000000-0000-0000-0000-000000000000`);
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/HTTP 404/);
  });
});

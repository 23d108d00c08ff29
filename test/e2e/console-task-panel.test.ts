import { createReadStream, statSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeConsole,
  HAVE_CHROMIUM,
  openConsole,
  shot,
  warnWithoutChromium,
} from "../helpers/browser.js";
import {
  api,
  putWorkflow,
  type RunningStandalone,
  startRun,
  waitFinal,
} from "../helpers/standalone.js";

warnWithoutChromium("console task panel tests");

/** The browser's globals this file reads in `page.evaluate` (the tests compile without DOM types). */
interface BrowserGlobals {
  document: { activeElement: { tagName: string; textContent: string | null } | null };
  getComputedStyle(e: unknown): { color: string };
  performance: { memory?: { usedJSHeapSize: number } };
}

/** What has focus in the page: its tag and text. */
function focused(page: Page): Promise<{ tag: string; text: string }> {
  return page.evaluate(() => {
    const active = (globalThis as unknown as BrowserGlobals).document.activeElement;
    return { tag: active?.tagName ?? "", text: active?.textContent ?? "" };
  });
}

describe.skipIf(!HAVE_CHROMIUM)("the console's task panel", () => {
  let sa: RunningStandalone;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ sa, browser, page } = await openConsole({ name: "panel" }));
  }, 60_000);

  afterAll(() => closeConsole({ sa, browser }));

  it("renders ANSI colours, shows the resolved parameters, and works from the keyboard", async () => {
    await putWorkflow(sa.url, "panel-colours", {
      params: { region: "eu" },
      tasks: [
        {
          code: "paint",
          type: "SHELL",
          // Colours set on one line carry to the next; a window title and a cursor move vanish.
          command:
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a Shoal parameter reference
            "printf '\\033[31mred ${region}\\033[0m plain\\n\\033[1;32mbold green\\nstill green\\033[0m\\n\\033]0;title\\007\\033[2Kafter escapes\\n'",
        },
        {
          code: "flaky",
          type: "SHELL",
          command: "echo try; exit 1",
          retries: 1,
          upstream: ["paint"],
        },
      ],
    });
    const id = await startRun(sa.url, "panel-colours");
    await waitFinal(sa.url, id);
    await page.goto(`${sa.url}/instances/${id}`);
    const row = page.getByRole("row", { name: /paint/ });
    await row.click();
    const panel = page.getByRole("complementary");
    // The panel's heading takes focus.
    await expect.poll(() => focused(page)).toEqual({ tag: "H2", text: "paint" });
    const log = page.getByRole("region", { name: "log" });
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("after escapes");
    const red = log.locator("span.ansi-red-fg");
    expect(await red.textContent()).toBe("red eu");
    // Readable on the dark log background, and not the plain text's colour.
    expect(
      await red.evaluate(
        (e) => (globalThis as unknown as BrowserGlobals).getComputedStyle(e).color,
      ),
    ).toBe("rgb(255, 107, 107)");
    expect(await log.locator("span.ansi-green-fg.ansi-bold").allTextContents()).toEqual([
      "bold green",
      "still green",
    ]);
    const text = (await log.textContent()) ?? "";
    expect(text).not.toContain("title");
    expect(text).not.toContain("[2K");
    expect(text).not.toContain("\x1b");
    await shot(page, "task-panel-ansi");

    // Parameters as resolved, with the SHELL command as it ran.
    await panel.getByText("Parameters as resolved").click();
    const params = panel.getByRole("table", { name: "resolved parameters" });
    await expect.poll(() => params.textContent(), { timeout: 10_000 }).toContain("region");
    expect(await params.getByRole("row", { name: /^region/ }).textContent()).toContain("eu");
    expect(await panel.locator("pre.rendered").textContent()).toContain("red eu");
    await shot(page, "task-panel-params");

    // Escape closes the panel and gives focus back to the task's row.
    await page.keyboard.press("Escape");
    await expect.poll(() => panel.count()).toBe(0);
    expect(new URL(page.url()).searchParams.get("task")).toBeNull();
    const back = await focused(page);
    expect(back.tag).toBe("TR");
    expect(back.text).toContain("paint");

    // Attempts from the keyboard: Enter opens the task, the arrows choose another attempt.
    await page.getByRole("row", { name: /flaky/ }).focus();
    await page.keyboard.press("Enter");
    const attempts = panel.getByRole("table", { name: "attempts" });
    await expect.poll(() => attempts.locator("tbody tr").count(), { timeout: 10_000 }).toBe(2);
    await expect.poll(() => log.textContent()).toContain("attempt 2");
    await attempts.locator("tbody tr[aria-current=true]").focus();
    await page.keyboard.press("ArrowUp");
    await expect.poll(() => log.textContent()).toContain("attempt 1");
    expect(await attempts.locator("tbody tr[aria-current=true] td").first().textContent()).toBe(
      "1",
    );
    expect(await focused(page)).toMatchObject({ tag: "TR" });
    await page.keyboard.press("Escape");
    await expect.poll(() => panel.count()).toBe(0);
  });

  it("follows the log of a running attempt", async () => {
    await putWorkflow(sa.url, "panel-ticks", {
      tasks: [
        {
          code: "ticks",
          type: "SHELL",
          command: "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.5; done",
        },
      ],
    });
    const id = await startRun(sa.url, "panel-ticks");
    await page.goto(`${sa.url}/instances/${id}?task=ticks`);
    const log = page.getByRole("region", { name: "log" });
    await expect
      .poll(() => log.locator(".log-position").textContent(), { timeout: 10_000 })
      .toMatch(/following/);
    await expect.poll(() => log.textContent(), { timeout: 15_000 }).toContain("tick 6");
    await expect
      .poll(() => log.locator(".log-position").textContent(), { timeout: 10_000 })
      .toMatch(/\(the end\)$/);
    expect(await log.textContent()).toContain("shoal: exit code 0");
  });

  it("says why a task waits on a full task group", async () => {
    expect((await api(sa.url, "PUT", "/v1/task-groups/panel-slot", { capacity: 1 })).status).toBe(
      201,
    );
    await putWorkflow(sa.url, "panel-group", {
      tasks: [
        { code: "first", type: "SHELL", command: "sleep 30", taskGroup: "panel-slot" },
        { code: "second", type: "SHELL", command: "sleep 30", taskGroup: "panel-slot" },
      ],
    });
    const id = await startRun(sa.url, "panel-group");
    try {
      // Whichever got the slot runs; the other waits for it.
      let waiting: string | undefined;
      await expect
        .poll(
          async () => {
            const inst = (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
            const tasks = (inst.tasks ?? []) as { code: string; state: string }[];
            const running = tasks.filter((t) => t.state === "RUNNING");
            waiting = tasks.find((t) => t.state !== "RUNNING")?.code;
            return running.length === 1 && tasks.length === 2;
          },
          { timeout: 30_000 },
        )
        .toBe(true);
      await page.goto(`${sa.url}/instances/${id}?task=${waiting}`);
      const why = page.getByRole("region", { name: "why it is not running" });
      await expect
        .poll(() => why.textContent(), { timeout: 10_000 })
        .toMatch(/task group 'panel-slot' is full \(1\/1 slots used\).*TASK_GROUP_FULL/);
      await shot(page, "task-panel-explain");
    } finally {
      await api(sa.url, "POST", `/v1/instances/${id}/stop`, {});
    }
  });

  it("reads a 20 MB log a page at a time, never whole", async () => {
    await putWorkflow(sa.url, "panel-big", {
      tasks: [
        { code: "loud", type: "SHELL", command: "yes 'line of text' | head -c 20000000; echo" },
      ],
    });
    const id = await startRun(sa.url, "panel-big");
    await waitFinal(sa.url, id, 180_000);
    const t0 = Date.now();
    await page.goto(`${sa.url}/instances/${id}?task=loud`);
    const log = page.getByRole("region", { name: "log" });
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("line of text");
    const firstPaint = Date.now() - t0;
    expect(firstPaint).toBeLessThan(5_000);
    const domLines = () => log.locator("pre > div").count();
    expect(await domLines()).toBeLessThanOrEqual(12_000);
    await expect.poll(() => log.locator(".log-position").textContent()).toMatch(/^Lines 1–2,000$/);

    // Skip to the end: every page is read, only the last ones are kept.
    const t1 = Date.now();
    await log.getByRole("button", { name: /Skip to the end/ }).click();
    await expect
      .poll(() => log.locator(".log-position").textContent(), { timeout: 120_000 })
      .toMatch(/\(the end\)$/);
    const skipped = Date.now() - t1;
    const position = (await log.locator(".log-position").textContent()) ?? "";
    // The worker's start line, 20,000,000 bytes of 13-byte lines (1,538,461 and a part, which
    // echo ends), then the worker's exit line.
    expect(position).toMatch(/–1,538,464 \(the end\)$/);
    expect(await domLines()).toBeLessThanOrEqual(12_000);
    const heapMb = await page.evaluate(
      () =>
        ((globalThis as unknown as BrowserGlobals).performance.memory?.usedJSHeapSize ?? 0) / 1e6,
    );
    expect(heapMb).toBeLessThan(150);
    await shot(page, "task-panel-big-log");

    // Back one page, then to the start.
    await log.getByRole("button", { name: /Earlier lines/ }).click();
    await expect.poll(() => log.locator(".log-position").textContent()).not.toMatch(/the end/);
    expect(await domLines()).toBeLessThanOrEqual(12_000);
    await log.getByRole("button", { name: /Back to the start/ }).click();
    await expect.poll(() => log.locator(".log-position").textContent()).toBe("Lines 1–2,000");
    // The download is the whole log as text, one line per message, read page by page.
    const t2 = Date.now();
    const [download] = await Promise.all([
      page.waitForEvent("download", { timeout: 120_000 }),
      log.getByRole("button", { name: "download" }).click(),
    ]);
    const saved = await download.path();
    const downloadMs = Date.now() - t2;
    expect(download.suggestedFilename()).toMatch(/-attempt-1\.log$/);
    let lines = 0;
    for await (const chunk of createReadStream(saved)) {
      for (const byte of chunk as Buffer) if (byte === 10) lines++;
    }
    expect(lines).toBe(1_538_464);
    expect(statSync(saved).size).toBeGreaterThan(20_000_000);
    await expect.poll(() => log.getByRole("button", { name: "download" }).isEnabled()).toBe(true);
    console.log(
      `20 MB log: first page in ${firstPaint} ms, skipped to the end in ${skipped} ms, heap ${heapMb.toFixed(0)} MB, downloaded whole in ${downloadMs} ms`,
    );
  }, 240_000);
});

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

/** Every state word StateBadge can show (its text, underscores as spaces). */
const STATE_WORD =
  /^\S+ (SUCCESS|FORCED SUCCESS|FAILURE|KILLED|RUNNING|DISPATCHED|SUBMITTED|NEED FAULT TOLERANCE|PAUSING|PAUSED|STOPPING|STOPPED|SKIPPED|NOT STARTED)$/;

/** The browser's globals read in `page.evaluate` (the tests compile without DOM types). */
interface FocusedElement {
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  matches(selector: string): boolean;
  closest(selector: string): unknown;
  querySelector(selector: string): { textContent: string | null } | null;
}
interface BrowserGlobals {
  document: { activeElement: FocusedElement | null };
}
interface Focused {
  tag: string;
  text: string;
  name: string | null;
  cell: string | null;
  inPanel: boolean;
  matches: boolean;
}

interface TaskRow {
  code: string;
  state: string;
  attempt: number;
  subInstanceId?: string;
}

describe.skipIf(!HAVE_CHROMIUM)("the console's controls and keyboard use", () => {
  let sa: RunningStandalone;
  let browser: Browser;
  let page: Page;

  /** The instance as the API shows it now. */
  async function instance(id: string): Promise<{ state: string; tasks: TaskRow[] }> {
    const r = await api(sa.url, "GET", `/v1/instances/${id}`);
    expect(r.status).toBe(200);
    return r.body as { state: string; tasks: TaskRow[] };
  }

  /** What has the focus: tag, text, `name`, first cell (of a row), inside an aside, matches `selector`. */
  function focused(selector = "*"): Promise<Focused> {
    return page.evaluate((sel) => {
      const el = (globalThis as unknown as BrowserGlobals).document.activeElement;
      return {
        tag: el?.tagName ?? "",
        text: el?.textContent ?? "",
        name: el?.getAttribute("name") ?? null,
        cell: el?.querySelector("td")?.textContent ?? null,
        inPanel: !!el?.closest("aside"),
        matches: el?.matches(sel) ?? false,
      };
    }, selector);
  }

  /** Presses Tab until `target` has the focus (at most `max` times); false if it never does. */
  async function tabTo(selector: string, max = 60): Promise<boolean> {
    for (let n = 0; n < max; n++) {
      await page.keyboard.press("Tab");
      if ((await focused(selector)).matches) return true;
    }
    return false;
  }

  beforeAll(async () => {
    ({ sa, browser, page } = await openConsole({ name: "control", examples: true }));
  }, 60_000);

  afterAll(() => closeConsole({ sa, browser }));

  it("pauses a running instance, starts nothing while PAUSED, and resumes it to SUCCESS", async () => {
    const steps = ["one", "two", "three", "four", "five"];
    const put = await api(sa.url, "PUT", "/v1/workflows/console-pauses", {
      tasks: steps.map((code, n) => ({
        code,
        type: "SHELL",
        command: "sleep 1",
        ...(n > 0 ? { upstream: [steps[n - 1]] } : {}),
      })),
    });
    expect(put.status).toBe(201);
    const run = await api(sa.url, "POST", "/v1/workflows/console-pauses/runs", {});
    expect(run.status).toBe(202);
    const id = run.body.instanceId as string;
    await page.goto(`${sa.url}/instances/${id}`);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("RUNNING");
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "pause", exact: true }).click();
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 15_000 })
      .toMatch(/PAUSING|PAUSED/);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("PAUSED");
    // Paused before the last step: something is left to run.
    const paused = await instance(id);
    expect(paused.state).toBe("PAUSED");
    const started = paused.tasks.filter((t) => t.state !== "PAUSED").map((t) => t.code);
    expect(started.length).toBeLessThan(steps.length);
    // While PAUSED nothing new starts: the same tasks, in the same states, a few seconds on.
    await new Promise((r) => setTimeout(r, 3_000));
    const later = await instance(id);
    expect(later.state).toBe("PAUSED");
    expect(later.tasks.map((t) => `${t.code}:${t.state}:${t.attempt}`)).toEqual(
      paused.tasks.map((t) => `${t.code}:${t.state}:${t.attempt}`),
    );
    expect(await page.getByRole("button", { name: "pause", exact: true }).count()).toBe(0);
    await shot(page, "instance-paused");
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "resume", exact: true }).click();
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("SUCCESS");
    const rows = await page.locator("table.tasks tbody tr .state").allTextContents();
    expect(rows).toHaveLength(steps.length);
    expect(rows.every((s) => s.includes("SUCCESS"))).toBe(true);
  });

  it("opens a sub-workflow's instance from its parent's graph, and links back", async () => {
    expect(
      (
        await api(sa.url, "PUT", "/v1/workflows/console-child", {
          tasks: [{ code: "inner", type: "SHELL", command: "echo inside the child" }],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await api(sa.url, "PUT", "/v1/workflows/console-parent", {
          tasks: [
            { code: "before", type: "SHELL", command: "echo before" },
            {
              code: "call-child",
              type: "SUB_WORKFLOW",
              workflow: "console-child",
              upstream: ["before"],
            },
          ],
        })
      ).status,
    ).toBe(201);
    const run = await api(sa.url, "POST", "/v1/workflows/console-parent/runs", {});
    expect(run.status).toBe(202);
    const parentId = run.body.instanceId as string;
    await page.goto(`${sa.url}/instances/${parentId}?view=graph`);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("SUCCESS");
    const childId = (await instance(parentId)).tasks.find(
      (t) => t.code === "call-child",
    )?.subInstanceId;
    expect(childId).toMatch(/^[0-9a-f-]{36}$/);
    const graph = page.getByRole("figure", { name: /graph of \d+ tasks/ });
    const node = graph.locator(".dag-node", { hasText: "call-child" });
    await expect.poll(() => node.getByRole("link").count(), { timeout: 15_000 }).toBe(1);
    await shot(page, "subworkflow-parent");
    await node.getByRole("link", { name: /child instance/ }).click();
    await page.waitForURL(new RegExp(`/instances/${childId}$`));
    await expect.poll(() => page.locator("h1").textContent()).toContain("console-child:1");
    const facts = page.locator("dl.facts");
    await expect.poll(() => facts.textContent()).toContain("SUB_WORKFLOW");
    // The way back: the parent, with its SUB_WORKFLOW task's panel open.
    const back = facts.getByRole("link", { name: parentId.slice(0, 8) });
    expect(await facts.textContent()).toContain("task call-child");
    await shot(page, "subworkflow-child");
    await back.click();
    await page.waitForURL(new RegExp(`/instances/${parentId}\\?task=call-child$`));
    await expect.poll(() => page.locator("h1").textContent()).toContain("console-parent:1");
    await expect
      .poll(() => page.getByRole("complementary").locator("h2").textContent())
      .toBe("call-child");
  });

  it("opens an instance from the list with Tab and Enter", async () => {
    await page.goto(`${sa.url}/instances`);
    await expect
      .poll(() => page.locator("table.list tbody tr").count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    const first = page.locator("table.list tbody tr a").first();
    const href = await first.getAttribute("href");
    expect(await tabTo("table.list tbody tr:first-child a")).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`${href}$`));
    await expect.poll(() => page.locator("h1 .state").count()).toBe(1);
  });

  it("opens a task's panel with Tab and Enter, and Escape closes it with the focus back on the row", async () => {
    const run = await api(sa.url, "POST", "/v1/workflows/console-pauses/runs", {});
    const id = run.body.instanceId as string;
    await page.goto(`${sa.url}/instances/${id}`);
    await expect
      .poll(() => page.locator("h1 .state").textContent(), { timeout: 30_000 })
      .toContain("SUCCESS");
    expect(await tabTo("table.tasks tbody tr")).toBe(true);
    const code = (await focused()).cell;
    expect(code).toBe("one");
    await page.keyboard.press("Enter");
    const panel = page.getByRole("complementary", { name: `task ${code}` });
    await expect.poll(() => panel.count()).toBe(1);
    await page.waitForURL(new RegExp(`task=${code}`));
    // The panel's heading takes the focus, so the keyboard is in the panel.
    await expect.poll(async () => (await focused()).inPanel).toBe(true);
    await page.keyboard.press("Escape");
    await expect.poll(() => panel.count()).toBe(0);
    expect(page.url()).not.toContain("task=");
    await expect
      .poll(async () => {
        const f = await focused("table.tasks tbody tr");
        return f.matches ? f.cell : f.tag;
      })
      .toBe(code);
  });

  it("writes every state as a word, not only as a colour", async () => {
    await page.goto(`${sa.url}/instances`);
    await expect
      .poll(() => page.locator("table.list tbody .state").count(), { timeout: 10_000 })
      .toBeGreaterThan(2);
    const listed = await page.locator("table.list tbody .state").allTextContents();
    for (const text of listed) expect(text.trim()).toMatch(STATE_WORD);
    // Each badge's word is visible text (not hidden from screen readers), and its title says it too.
    const badges = await page
      .locator("table.list tbody .state")
      .evaluateAll((els) =>
        els.map((e) => ({ title: e.getAttribute("title"), text: e.innerText })),
      );
    for (const b of badges) expect(b.text).toContain((b.title ?? "?").replaceAll("_", " "));
    await page.locator("table.list tbody tr a").first().click();
    await expect.poll(() => page.locator("table.tasks tbody .state").count()).toBeGreaterThan(0);
    for (const text of await page.locator(".state").allTextContents())
      expect(text.trim()).toMatch(STATE_WORD);
  });

  it("opens the Run form from the workflows list with the keyboard alone", async () => {
    await page.goto(`${sa.url}/workflows`);
    const row = page.getByRole("row", { name: /console-pauses/ });
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    const index = await row.evaluate((tr) =>
      Array.from(tr.parentElement?.children ?? []).indexOf(tr),
    );
    expect(await tabTo(`table tbody tr:nth-child(${index + 1}) button`, 200)).toBe(true);
    expect((await focused()).text).toBe("Run…");
    await page.keyboard.press("Enter");
    const form = page.getByRole("form", { name: "run console-pauses" });
    await expect.poll(() => form.count()).toBe(1);
    // The focus moves into the form (its heading), so the next Tab is its first field, not the
    // rows below the button.
    await expect.poll(async () => (await focused()).text).toBe("Run console-pauses");
    await page.keyboard.press("Tab");
    expect((await focused()).name).toBe("params");
    // Cancel gives the focus back to the Run… button; Enter opens the form again.
    expect(await tabTo("form.run-form button[type=button]", 20)).toBe(true);
    await page.keyboard.press("Enter");
    await expect.poll(() => form.count()).toBe(0);
    expect((await focused()).text).toBe("Run…");
    await page.keyboard.press("Enter");
    await expect.poll(() => form.count()).toBe(1);
    // Tab reaches the form's Run button; Enter starts the run and opens its instance.
    expect(await tabTo("form.run-form button[type=submit]", 20)).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/instances\/[0-9a-f-]{36}$/);
    await expect.poll(() => page.locator("h1").textContent()).toContain("console-pauses:1");
  });
});

/**
 * What an imported DolphinScheduler workflow looks like in the console: its original (Chinese)
 * name beside the ASCII one in the workflow list and on its page, and each task's original name on
 * its node of the graph and in its panel (`displayName`, kept by `shoal import dolphinscheduler`).
 */
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

warnWithoutChromium("console display-name tests");

describe.skipIf(!HAVE_CHROMIUM)("display names in the console", () => {
  let sa: RunningStandalone;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ sa, browser, page } = await openConsole({ name: "display-name" }));
    const put = await api(sa.url, "PUT", "/v1/workflows/wf-ad4a36", {
      displayName: "每日订单汇总",
      description: "imported from DolphinScheduler",
      tasks: [
        { code: "task-55c43a", displayName: "准备数据", type: "SHELL", command: "echo prepare" },
        {
          code: "task-a39864",
          displayName: "加载到数仓",
          type: "SHELL",
          upstream: ["task-55c43a"],
          command: "echo load",
        },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
  }, 60_000);

  afterAll(() => closeConsole({ sa, browser }));

  it("shows the original names in the list, on the page, on the graph's nodes and in the panel", async () => {
    await page.goto(`${sa.url}/workflows`);
    const row = page.getByRole("row", { name: /wf-ad4a36/ });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("每日订单汇总");
    await row.getByRole("link", { name: "wf-ad4a36", exact: true }).click();
    await page.waitForURL(/\/workflows\/wf-ad4a36$/);
    await expect
      .poll(() => page.locator("main").textContent(), { timeout: 10_000 })
      .toContain("每日订单汇总");
    const graph = page.getByRole("figure", { name: /graph of 2 tasks/ });
    const node = graph.locator(".dag-node", { hasText: "加载到数仓" });
    await expect.poll(() => node.count(), { timeout: 15_000 }).toBe(1);
    // The code stays reachable: in the node's title (hover) and the panel's heading.
    expect(await node.getAttribute("title")).toBe("加载到数仓 · task-a39864 (SHELL)");
    await node.click();
    await page.waitForURL(/task=task-a39864/);
    const panel = page.getByRole("complementary", { name: "task task-a39864" });
    expect(await panel.locator("h2").textContent()).toBe("task-a39864");
    expect(await panel.textContent()).toContain("加载到数仓");
    await shot(page, "workflow-display-names");
  });
});

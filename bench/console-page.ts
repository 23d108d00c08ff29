/**
 * One page load of the console in headless Chromium, timed from the page's own clock: an init
 * script (installed before any of the page's code runs) checks on every animation frame for the
 * element that marks the view as usable and records `performance.now()` (ms since navigation
 * start) when it first has a box. The in-page code is passed as strings: the bench compiles
 * without the DOM's types.
 */
import type { Browser, Page } from "playwright-core";

/** How long any one wait may take (ms) before the run fails with what it waited for. */
const WAIT_MS = 90_000;

/** What one load measured, in ms since navigation start (`layoutMs`: ELK's own time). */
export interface LoadFigures {
  readyMs: number;
  /** Long tasks (main thread busy ≥ 50 ms) from navigation start until ready. */
  loadLongTasks: { count: number; totalMs: number; longestMs: number };
  layoutMs?: number;
  smoothness?: Smoothness;
}

/** Frames and long tasks while zooming the graph with the mouse wheel (ms). */
export interface Smoothness {
  longestFrameMs: number;
  longTasks: number;
  longTasksMs: number;
  longestTaskMs: number;
  windowMs: number;
  /** Zoom of the graph before the wheel, after zooming in, and at the end (React Flow's scale). */
  zoom: [number, number, number];
}

/** Records when `selector` first has a box, and every long task from the start. */
function watchScript(selector: string): string {
  return `(() => {
    const sel = ${JSON.stringify(selector)};
    window.__shoalLong = [];
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__shoalLong.push([e.startTime, e.duration]);
      }).observe({ type: "longtask", buffered: true });
    } catch {}
    const tick = () => {
      const el = document.querySelector(sel);
      if (el) {
        const r = el.getBoundingClientRect();
        if (r.width > 0 || r.height > 0) {
          window.__shoalReady = performance.now();
          return;
        }
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  })()`;
}

// Long tasks that started before the view was ready.
const LOAD_LONG_TASKS = `(() => {
  const long = window.__shoalLong.filter(([start]) => start <= window.__shoalReady);
  return {
    count: long.length,
    totalMs: long.reduce((s, [, d]) => s + d, 0),
    longestMs: long.reduce((m, [, d]) => Math.max(m, d), 0),
  };
})()`;

// React Flow's current zoom, from its viewport's transform (proves the wheel zoomed).
const SCALE = `(() => {
  const t = document.querySelector(".react-flow__viewport")?.style.transform ?? "";
  return Number(/scale\\(([\\d.e-]+)\\)/.exec(t)?.[1] ?? NaN);
})()`;

// Frame gaps: a requestAnimationFrame loop keeps the longest interval between two frames.
const START_FRAMES = `(() => {
  const f = (window.__shoalFrames = { on: true, max: 0, last: performance.now(), t0: performance.now() });
  const loop = (t) => {
    if (!f.on) return;
    f.max = Math.max(f.max, t - f.last);
    f.last = t;
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
})()`;

const STOP_FRAMES = `(() => {
  const f = window.__shoalFrames;
  f.on = false;
  const long = window.__shoalLong.filter(([start]) => start >= f.t0);
  return {
    longestFrameMs: f.max,
    longTasks: long.length,
    longTasksMs: long.reduce((s, [, d]) => s + d, 0),
    longestTaskMs: long.reduce((m, [, d]) => Math.max(m, d), 0),
    windowMs: performance.now() - f.t0,
  };
})()`;

/** Zooms in 5 and out 5 notches with the mouse wheel over the graph; frame and long-task figures. */
async function wheelGraph(page: Page): Promise<Smoothness> {
  const box = await page.locator("figure.graph").boundingBox({ timeout: WAIT_MS });
  if (!box) throw new Error("figure.graph has no box: cannot zoom it");
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForTimeout(300); // let the first render's work settle before the window opens
  const before = Number(await page.evaluate(SCALE));
  await page.evaluate(START_FRAMES);
  let zoomedIn = Number.NaN;
  for (let i = 0; i < 10; i++) {
    await page.mouse.wheel(0, i < 5 ? -300 : 300);
    await page.waitForTimeout(120);
    if (i === 4) zoomedIn = Number(await page.evaluate(SCALE));
  }
  await page.waitForTimeout(300); // the last zoom's frames
  const figures = (await page.evaluate(STOP_FRAMES)) as Omit<Smoothness, "zoom">;
  const after = Number(await page.evaluate(SCALE));
  return { ...figures, zoom: [before, zoomedIn, after] };
}

/**
 * Loads `url` in a fresh browser context (empty cache), waits until `selector` is visible.
 * @param opts.graph also read the layout time of `figure.graph[data-layout-ms]` and zoom the graph.
 */
export async function loadPage(
  browser: Browser,
  url: string,
  selector: string,
  opts: { graph?: boolean } = {},
): Promise<LoadFigures> {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  try {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.addInitScript(watchScript(selector));
    await page.goto(url, { waitUntil: "commit", timeout: WAIT_MS });
    const ready = await page
      .waitForFunction("window.__shoalReady", undefined, { timeout: WAIT_MS, polling: 50 })
      .catch(async (e: Error) => {
        const text = (await page.textContent("body").catch(() => "")) ?? "";
        throw new Error(
          `${url}: '${selector}' not visible within ${WAIT_MS / 1000} s (${e.message.split("\n")[0]}); page errors: ${errors.join("; ") || "none"}; page text: ${text.slice(0, 300)}`,
        );
      });
    const figures: LoadFigures = {
      readyMs: Number(await ready.jsonValue()),
      loadLongTasks: (await page.evaluate(LOAD_LONG_TASKS)) as LoadFigures["loadLongTasks"],
    };
    if (opts.graph) {
      const fig = page.locator("figure.graph[data-layout-ms]");
      await fig.waitFor({ state: "attached", timeout: WAIT_MS });
      figures.layoutMs = Number(await fig.getAttribute("data-layout-ms"));
      figures.smoothness = await wheelGraph(page);
    }
    return figures;
  } finally {
    await ctx.close();
  }
}

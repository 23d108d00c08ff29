/**
 * `npm run bench -- console [--runs=N]` (only when named): the web console's time to interactive
 * and bundle size (issue 13). Starts `shoal standalone` as a child process serving the built
 * console (console/dist, or SHOAL_CONSOLE_DIR), PUTs Montage and Epigenomics (WfCommons traces,
 * time scale 0), runs each once as a dry run, then loads in headless Chromium, N times each in a
 * fresh browser context (no cache): the instance page (until the heading's state badge shows),
 * the graph view (until the first node shows; also ELK's layout time and the frames while zooming
 * with the mouse wheel) and the Gantt view (until the first bar shows). All times are ms since
 * navigation start, measured by the page's own clock (console-page.ts).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { convertWfcommons } from "../lib/import/wfcommons.js";
import { CHROMIUM, HAVE_CHROMIUM, launchBrowser } from "../test/helpers/browser.js";
import {
  putWorkflow,
  REPO,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../test/helpers/standalone.js";
import { bundleSizes } from "./console-bundle.js";
import { type LoadFigures, loadPage, type Smoothness } from "./console-page.js";
import { loadTrace, type ScenarioOptions, type ScenarioResult, stamp } from "./scenario.js";
import { round, table } from "./stats.js";

const DAGS = [
  { label: "Montage", file: "montage-chameleon-2mass-005d-001.json" },
  { label: "Epigenomics", file: "epigenomics-chameleon-ilmn-6seq-50k-001.json" },
];
/** Goal of issue 13 for the initial JS, gzipped (bytes). */
const INITIAL_JS_GOAL = 400 * 1024;
/** Goal for the Epigenomics graph's first node (ms). */
const GRAPH_GOAL_MS = 2000;

const kb = (bytes: number) => round(bytes / 1024, 1);

/** The median (mean of the middle two for an even count; NaN when empty). */
function median(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  if (!v.length) return Number.NaN;
  return v.length % 2 ? (v[mid] as number) : ((v[mid - 1] as number) + (v[mid] as number)) / 2;
}

/** The console's load times per DAG and view, and its bundle sizes. */
export async function consoleScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const runs = Math.max(1, Math.floor(opts.runs ?? 3));
  const dir = resolve(process.env.SHOAL_CONSOLE_DIR || join(REPO, "console", "dist"));
  if (!existsSync(join(dir, "index.html")))
    throw new Error(
      `no built console at ${dir}: run 'npm run build:console' (or point SHOAL_CONSOLE_DIR at a build)`,
    );
  if (!HAVE_CHROMIUM)
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set SHOAL_CHROMIUM)`,
    );
  const bundle = bundleSizes(dir);

  const dataDir = mkdtempSync(join(tmpdir(), "shoal-bench-console-"));
  // The standalone serves the very build whose sizes are reported.
  const sa = await startStandaloneProcess({
    dataDir,
    workers: 16,
    env: { SHOAL_CONSOLE_DIR: dir },
  });
  const browser = await launchBrowser().catch((e: Error) => {
    throw new Error(`Chromium at ${CHROMIUM} did not start: ${e.message}`);
  });
  const figures: Record<
    string,
    { tasks: number; instanceId: string; loads: Record<string, LoadFigures[]> }
  > = {};
  try {
    for (const d of DAGS) {
      const { definition } = convertWfcommons(loadTrace(d.file), { timeScale: 0, source: d.file });
      const name = `bench-console-${d.label.toLowerCase()}-${stamp()}`;
      await putWorkflow(sa.url, name, definition);
      const id = await startRun(sa.url, name, { dryRun: true });
      const inst = await waitFinal(sa.url, id, 300_000);
      if (inst.state !== "SUCCESS")
        throw new Error(`${d.label} dry run ${id} ended ${inst.state}, not SUCCESS`);
      const loads: Record<string, LoadFigures[]> = { instance: [], graph: [], gantt: [] };
      const base = `${sa.url}/instances/${encodeURIComponent(id)}`;
      for (let r = 0; r < runs; r++) {
        loads.instance?.push(await loadPage(browser, base, "h1 .state"));
        loads.graph?.push(
          await loadPage(browser, `${base}?view=graph`, ".dag-node", { graph: true }),
        );
        loads.gantt?.push(
          await loadPage(browser, `${base}?view=gantt`, "figure.gantt svg rect.bar"),
        );
      }
      figures[d.label] = { tasks: definition.tasks.length, instanceId: id, loads };
    }
  } finally {
    await browser.close().catch(() => {});
    await sa.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const rows: Array<Array<string | number>> = [
    ["workflow", "tasks", "measure (ms unless said)", "median", "max", "runs"],
  ];
  const stat = (values: number[]) => ({
    median: round(median(values), 1),
    max: round(Math.max(...values), 1),
  });
  const summary: Record<string, unknown> = {};
  for (const [label, f] of Object.entries(figures)) {
    const g = f.loads.graph ?? [];
    const inst = f.loads.instance ?? [];
    const gantt = f.loads.gantt ?? [];
    const sm = (pick: (x: Smoothness) => number) =>
      g.map((l) => (l.smoothness ? pick(l.smoothness) : Number.NaN));
    const measures: Array<[string, number[]]> = [
      ["instance page → state badge", inst.map((l) => l.readyMs)],
      ["  longest task until then", inst.map((l) => l.loadLongTasks.longestMs)],
      ["graph view → first node", g.map((l) => l.readyMs)],
      ["  ELK layout (page's figure)", g.map((l) => l.layoutMs ?? Number.NaN)],
      ["  long tasks until then (total)", g.map((l) => l.loadLongTasks.totalMs)],
      ["  longest task until then", g.map((l) => l.loadLongTasks.longestMs)],
      ["gantt view → first bar", gantt.map((l) => l.readyMs)],
      ["  longest task until then", gantt.map((l) => l.loadLongTasks.longestMs)],
      ["graph wheel ×10: longest frame", sm((x) => x.longestFrameMs)],
      ["  long tasks (count)", sm((x) => x.longTasks)],
      ["  long tasks (total)", sm((x) => x.longTasksMs)],
      ["  longest task", sm((x) => x.longestTaskMs)],
      ["  zoom after 5 notches in (× start)", sm((x) => x.zoom[1] / x.zoom[0])],
    ];
    const s: Record<string, unknown> = { tasks: f.tasks, instanceId: f.instanceId };
    let group = "";
    for (const [what, values] of measures) {
      const { median, max } = stat(values);
      rows.push([label, f.tasks, what, median, max, values.length]);
      // Indented rows belong to the measure above them: their JSON key says so.
      if (!what.startsWith(" ")) group = what;
      s[what.startsWith(" ") ? `${group}: ${what.trim()}` : what] = { median, max, values };
    }
    summary[label] = s;
  }

  const assetRows: Array<Array<string | number>> = [["asset", "kind", "raw KB", "gzip KB"]];
  for (const a of bundle.assets) assetRows.push([a.file, a.kind, kb(a.raw), kb(a.gzip)]);
  assetRows.push([
    "initial JS (total)",
    "initial",
    kb(bundle.initialJs.raw),
    kb(bundle.initialJs.gzip),
  ]);
  assetRows.push(["lazy JS (total)", "lazy", kb(bundle.lazyJs.raw), kb(bundle.lazyJs.gzip)]);
  summary.bundle = bundle;

  const epi = summary.Epigenomics as Record<string, { median: number }> | undefined;
  const firstNode = Math.round(epi?.["graph view → first node"]?.median ?? Number.NaN);
  return {
    name: "console",
    summary: { runs, consoleDir: dir, ...summary },
    tables: [
      `Console load times (ms since navigation start; fresh browser context each, ${runs} run(s); console from ${dir})\n${table(rows)}`,
      `Console bundle (${dir}/assets; initial files from ${bundle.source})\n${table(assetRows)}`,
      `console: initial JS ${kb(bundle.initialJs.gzip)} KB gzipped (goal ${kb(INITIAL_JS_GOAL)}), lazy JS ${kb(bundle.lazyJs.gzip)} KB gzipped`,
      `console: Epigenomics graph first node ${firstNode} ms (goal ${GRAPH_GOAL_MS})`,
    ],
  };
}

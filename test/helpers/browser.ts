/**
 * A headless Chromium for the console's end-to-end tests: Debian's `chromium` driven by
 * playwright-core (Playwright's own browser download does not work here). `.ci/run` installs
 * the package when /usr/bin/chromium is missing; without it the console tests are skipped, and
 * say so.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { REPO, type RunningStandalone, startStandaloneProcess } from "./standalone.js";

/** The browser the tests drive (override with SHOAL_CHROMIUM). */
export const CHROMIUM = process.env.SHOAL_CHROMIUM ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** Where screenshots go (a CI artifact; not committed). */
export const SHOTS = join(REPO, ".test-artifacts", "console");

/** Builds the console unless console/dist has it (`npm ci` builds it through `prepare`). */
export function ensureConsoleBuilt(): void {
  // SHOAL_CONSOLE_DIR: a build of its own (standalone serves it too), so that two builds at
  // once do not overwrite each other's files.
  const dir = process.env.SHOAL_CONSOLE_DIR || join(REPO, "console", "dist");
  if (existsSync(join(dir, "index.html"))) return;
  execFileSync(
    process.execPath,
    [
      join(REPO, "node_modules", "vite", "bin", "vite.js"),
      "build",
      "--config",
      "console/vite.config.ts",
      "--logLevel",
      "warn",
      "--outDir",
      dir,
      "--emptyOutDir",
    ],
    {
      cwd: REPO,
      stdio: "inherit",
    },
  );
}

/** Launches headless Chromium with the flags that work on a machine without a network. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-quic",
      "--no-first-run",
      "--disable-sync",
    ],
  });
}

/** Saves a screenshot of the page as `<name>.png` under {@link SHOTS}. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A standalone and a browser page on its console, for one test file. */
export interface ConsoleUnderTest {
  sa: RunningStandalone;
  browser: Browser;
  page: Page;
}

/**
 * Starts what a console test file needs: the console built, a `shoal standalone` in a fresh data
 * directory (`examples` loads the example workflows), headless Chromium and one 1400×900 page.
 * Close it with {@link closeConsole}.
 */
export async function openConsole(opts: {
  name: string;
  examples?: boolean;
}): Promise<ConsoleUnderTest> {
  ensureConsoleBuilt();
  const sa = await startStandaloneProcess({
    dataDir: mkdtempSync(join(tmpdir(), `shoal-console-${opts.name}-`)),
    ...(opts.examples ? { examples: true } : {}),
  });
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  return { sa, browser, page };
}

/** Closes the browser, then stops the standalone (either may be missing after a failed start). */
export async function closeConsole(c: Partial<ConsoleUnderTest> | undefined): Promise<void> {
  await c?.browser?.close();
  await c?.sa?.stop();
}

/** Says, once per file, that its console tests are skipped because Chromium is missing. */
export function warnWithoutChromium(what: string): void {
  if (!HAVE_CHROMIUM) {
    console.warn(`${what} skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  }
}

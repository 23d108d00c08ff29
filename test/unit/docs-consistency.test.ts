/**
 * The docs and the code checked against each other, so that the docs cannot promise what does
 * not exist or call built things unbuilt: no page says a feature is "not built yet", nor that
 * Shoal has no X (alerts, schedules, …) while the code of X is there; every
 * `shoal` verb, subcommand and flag the docs show exists in the CLI (read from its own help);
 * every `METHOD /v1/...` route the docs name is served by the API's router; and every route of
 * the route table (lib/api/routes.ts, which the OpenAPI document describes) is in docs/api.md.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ApiDeps } from "../../lib/api/deps.js";
import { handleApiRequest } from "../../lib/api/router.js";
import { ROUTES } from "../../lib/api/routes.js";
import { main } from "../../lib/cli/main.js";

const ROOT = join(import.meta.dirname, "..", "..");
const DOCS = [
  "README.md",
  "cdk/README.md",
  "localstack/README.md",
  "examples/README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

/** Phrases that announce unbuilt work: the docs describe what is, and issues hold the rest. */
const STALE = [
  /\bnot built\b/i,
  /\bbeing built\b/i,
  /\bnot (?:yet )?implemented\b/i,
  /\bno CLI verb\b/i,
  /\bissue \d+ goes on\b/i,
  /\barrives? with issue\b/i,
];

describe("docs say nothing is unbuilt", () => {
  for (const file of DOCS) {
    it(file, () => {
      const hits = read(file)
        .split("\n")
        .flatMap((line, i) => (STALE.some((re) => re.test(line)) ? [`${i + 1}: ${line}`] : []));
      expect(hits).toEqual([]);
    });
  }
});

/**
 * Features Shoal has, each with the code that proves it and the words the docs call it by. A
 * page written before the feature ("Shoal has no alerts yet") must change with it.
 */
const FEATURES: ReadonlyArray<{ feature: string; code: string; words: string }> = [
  { feature: "alerts", code: "lib/alerts/alerts.ts", words: "alerts?|alerting|notifications?" },
  { feature: "schedules", code: "lib/engine/schedule-sweeper.ts", words: "schedul(?:es?|ing)" },
  { feature: "backfills", code: "lib/store/backfills.ts", words: "backfills?" },
  { feature: "triggers", code: "lib/api/triggers.ts", words: "(?:event )?triggers?" },
  { feature: "secrets", code: "lib/secrets/secret-source.ts", words: "secrets?" },
  { feature: "task groups", code: "lib/store/task-groups.ts", words: "task groups?" },
  { feature: "events", code: "lib/core/state-events.ts", words: "(?:state-change )?events" },
  { feature: "the console", code: "console/src/main.tsx", words: "(?:web )?(?:console|UI)" },
];

/**
 * Phrases saying Shoal lacks a feature called `words`: "Shoal has no alerts (yet)", "Shoal
 * does not support schedules", "no triggers yet", "alerts are not supported". The word must end
 * there: "Shoal has no alert-only workflow timeout" is about something else.
 */
function lackPhrases(words: string): RegExp[] {
  const w = `(?:${words})(?![\\w-])`;
  return [
    new RegExp(`\\bShoal (?:has|supports|sends|offers) no (?:\\w+ )?${w}`, "i"),
    new RegExp(
      `\\bShoal (?:does not|doesn't|cannot|can't) (?:yet )?(?:have|support|send|run|offer) (?:any )?${w}`,
      "i",
    ),
    new RegExp(`\\bno ${w} yet\\b`, "i"),
    new RegExp(`\\b${w} (?:is|are) not (?:yet )?(?:supported|available)\\b`, "i"),
  ];
}

describe("docs do not say Shoal lacks a feature it has", () => {
  it("recognises the phrases (and not their look-alikes)", () => {
    const alerts = lackPhrases(FEATURES[0]?.words ?? "");
    const says = (line: string) => alerts.some((re) => re.test(line));
    expect(says("DolphinScheduler's WARN sends an alert; Shoal has no alerts yet")).toBe(true);
    expect(says("Shoal does not support alerting.")).toBe(true);
    expect(says("there are no notifications yet")).toBe(true);
    expect(says("Alerts are not supported yet")).toBe(true);
    expect(says("Shoal has no alert-only workflow timeout")).toBe(false);
    expect(says("Shoal sends alerts when a workflow instance ends")).toBe(false);
  });

  for (const { feature, code, words } of FEATURES) {
    it(`${feature} (${code})`, () => {
      expect(existsSync(join(ROOT, code)), `${code} is gone: update FEATURES`).toBe(true);
      const phrases = lackPhrases(words);
      const hits = DOCS.flatMap((file) =>
        read(file)
          .split("\n")
          .flatMap((line, i) =>
            phrases.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
          ),
      );
      expect(hits).toEqual([]);
    });
  }
});

// ---- the CLI ------------------------------------------------------------------------------

interface HelpNode {
  options: Set<string>;
  commands: Map<string, HelpNode | undefined>;
}

async function helpOf(path: string[]): Promise<string> {
  let out = "";
  const sink = {
    write: (s: string) => {
      out += s;
      return true;
    },
  };
  await main([...path, "--help"], { stdout: sink, stderr: sink });
  return out;
}

/** The option and command names one help text lists. */
function parseHelp(text: string): { options: Set<string>; commands: string[] } {
  const options = new Set<string>();
  const commands: string[] = [];
  let section = "";
  for (const line of text.split("\n")) {
    if (/^\S.*:$/.test(line)) {
      section = line;
      continue;
    }
    if (/Options:$/.test(section)) {
      const m = /^ {2}(-[\w-]+(?:, --[\w-]+)?)/.exec(line);
      for (const name of m?.[1]?.split(", ") ?? []) options.add(name);
    } else if (section === "Commands:") {
      const m = /^ {2}([a-z][\w-]*)/.exec(line);
      if (m?.[1]) commands.push(m[1]);
    }
  }
  return { options, commands };
}

async function commandTree(path: string[] = []): Promise<HelpNode> {
  const { options, commands } = parseHelp(await helpOf(path));
  const node: HelpNode = { options, commands: new Map() };
  for (const c of commands) {
    // `help` is commander's own: it takes a verb, not subcommands.
    node.commands.set(
      c,
      c === "help" ? { options: new Set(), commands: new Map() } : await commandTree([...path, c]),
    );
  }
  return node;
}

/** Every command line the docs show: `shoal …` in code, and the README's CLI table's verbs. */
function documentedCommandLines(): Array<{ file: string; line: string }> {
  const out: Array<{ file: string; line: string }> = [];
  for (const file of DOCS) {
    const text = read(file);
    let inFence = false;
    for (const raw of text.split("\n")) {
      if (raw.trimStart().startsWith("```")) {
        inFence = !inFence;
        continue;
      }
      const spans = inFence ? [raw] : [...raw.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
      for (const span of spans) {
        for (const m of span.matchAll(/(?:^|[\s(;&|])(?:npx )?shoal ([a-z][^;&|#]*)/g)) {
          out.push({ file, line: m[1] as string });
        }
      }
    }
  }
  // The README's verb table lists commands without `shoal`.
  const readme = read("README.md");
  const cli = readme.slice(
    readme.indexOf("## The CLI"),
    readme.indexOf("\n## ", readme.indexOf("## The CLI") + 5),
  );
  for (const row of cli.split("\n").filter((l) => l.startsWith("| `"))) {
    const firstCell = row.split(/(?<!\\)\|/)[1] ?? "";
    for (const m of firstCell.matchAll(/`([^`]+)`/g))
      out.push({ file: "README.md (CLI table)", line: m[1] as string });
  }
  return out;
}

/** Problems of one documented command line against the CLI's command tree. */
function checkCommandLine(tree: HelpNode, line: string): string[] {
  const words = line.replace(/\\\|/g, "|").trim().split(/\s+/);
  let node = tree;
  let i = 0;
  const path: string[] = [];
  // Walk down verbs and subcommands ("backfills get|pause ID" names several).
  while (node.commands.size > 0 && i < words.length) {
    const word = words[i] as string;
    if (!/^[a-z][\w|-]*$/.test(word)) break;
    const names = word.split("|");
    const missing = names.filter((n) => !node.commands.has(n));
    if (missing.length > 0) {
      // A word after a leaf-capable verb may be an argument ("shoal logs ID task").
      if (path.length > 0 || node !== tree) break;
      return [`unknown verb '${path.concat(word).join(" ")}'`];
    }
    path.push(names[0] as string);
    node = node.commands.get(names[0] as string) as HelpNode;
    i++;
  }
  if (node.commands.size > 0 && path.length > 0 && i < words.length) {
    return [`'shoal ${path.join(" ")}' has no subcommand '${words[i]}'`];
  }
  const known = new Set([...node.options, ...tree.options]);
  const problems: string[] = [];
  for (const flag of line.matchAll(/(?<![\w-])(--[a-z][\w-]*|-[a-zA-Z])(?![\w-])/g)) {
    if (!known.has(flag[1] as string))
      problems.push(`'shoal ${path.join(" ")}' has no flag ${flag[1]}`);
  }
  return problems;
}

describe("every shoal command the docs show exists", () => {
  it("verbs, subcommands and flags", async () => {
    const tree = await commandTree();
    const lines = documentedCommandLines();
    expect(lines.length).toBeGreaterThan(50);
    const problems = lines.flatMap(({ file, line }) =>
      checkCommandLine(tree, line).map((p) => `${file}: \`shoal ${line.trim()}\`: ${p}`),
    );
    expect(problems).toEqual([]);
  }, 60_000);
});

// ---- the API ------------------------------------------------------------------------------

const ROUTE = /\b(GET|PUT|POST|DELETE)(?:\/(?:GET|PUT|POST|DELETE))* (\/v1\/[^\s`),]*)/g;

/** Every `METHOD /v1/…` the docs name, with alternatives (`online|offline`) spelled out. */
function documentedRoutes(files: string[]): Array<{ file: string; method: string; path: string }> {
  const out: Array<{ file: string; method: string; path: string }> = [];
  for (const file of files) {
    // Inside code, `POST /v1/x/{id}/pause · resume` and `… | resume` name alternatives.
    const text = read(file).replace(/`[^`\n]+`/g, (span) =>
      span.replace(/\s*(?:·|\\?\|)\s*(?=[a-z][\w-]*)/g, "|"),
    );
    for (const m of text.matchAll(ROUTE)) {
      const path = (m[2] as string).split("?")[0]?.replace(/[.:]$/, "") ?? "";
      // `<verb>` stands for any of several documented next to it.
      if (!path.includes("<")) out.push({ file, method: m[1] as string, path });
    }
  }
  return out;
}

/** A concrete path for a documented one: `{id}` → a sample value. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, "x1");

async function served(method: string, path: string): Promise<boolean> {
  const res = await handleApiRequest(
    { now: () => 0 } as unknown as ApiDeps,
    {
      rawPath: concrete(path),
      requestContext: { http: { method } },
      headers: {},
    } as never,
  );
  if (res.statusCode !== 404) return true;
  const message = JSON.parse(String(res.body ?? "{}"))?.error?.message ?? "";
  return !/^(no endpoint|no resource at)|is not supported on/.test(message);
}

describe("every route the docs name is served, and every route is documented", () => {
  it("docs → router", async () => {
    const missing: string[] = [];
    for (const r of documentedRoutes(DOCS)) {
      for (const alt of expand(r.path)) {
        if (!(await served(r.method, alt))) missing.push(`${r.file}: ${r.method} ${alt}`);
      }
    }
    expect(missing).toEqual([]);
  });

  // The route table is what both the router and the OpenAPI document are built from
  // (openapi.test.ts checks the document describes exactly the table).
  it("route table → docs/api.md", () => {
    const documented = new Set(
      documentedRoutes(["docs/api.md"]).flatMap((r) =>
        expand(r.path).map((p) => `${r.method} ${p.replace(/\{[^}]+\}/g, "{}")}`),
      ),
    );
    const undocumented = ROUTES.map(
      (r) => `${r.method} ${r.path.replace(/\{[^}]+\}/g, "{}")}`,
    ).filter((key) => !documented.has(key));
    expect(undocumented).toEqual([]);
  });
});

/** `/v1/schedules/{id}/online|offline` → both paths. */
function expand(path: string): string[] {
  const segments = path.split("/");
  let out = [""];
  for (const seg of segments.slice(1)) {
    out = out.flatMap((p) => seg.split("|").map((s) => `${p}/${s}`));
  }
  return out;
}

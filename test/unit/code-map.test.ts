/**
 * docs/architecture.md's "Map of the code" says what each folder may import. This checks the map
 * against the tree (every folder listed, every real import allowed) and against biome.json (the
 * lint rule that keeps it so denies exactly what the map does not allow).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;
const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
const section = doc.slice(
  doc.indexOf("## Map of the code"),
  doc.indexOf("\n## ", doc.indexOf("## Map of the code") + 5),
);

interface Row {
  folder: string;
  mayImport: string;
}
const rows: Row[] = section
  .split("\n")
  .filter((l) => l.startsWith("| `"))
  .map((l) => {
    const cells = l.split(" | ");
    return {
      folder: (cells[0] ?? "").replace(/^\| `|`$/g, ""),
      mayImport: (cells[2] ?? "").replace(/ \|$/, ""),
    };
  });
const libRows = rows.filter((r) => r.folder.startsWith("lib/"));
const libNames = libRows.map((r) => r.folder.slice(4));

/** The lib folders a row allows, as the map words it. */
function allowedOf(r: Row, i: number): string[] {
  if (r.mayImport === "nothing else of Shoal") return [];
  if (r.mayImport === "the folders above") return libNames.slice(0, i);
  return [...r.mayImport.matchAll(/`lib\/([a-z]+)`/g)].map((m) => m[1] as string);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** The lib folders the files of `lib/<name>` import (relative imports only). */
function importedFolders(name: string): Set<string> {
  const out = new Set<string>();
  for (const file of filesUnder(join(ROOT, "lib", name))) {
    for (const m of readFileSync(file, "utf8").matchAll(/from "(\.[^"]+)"/g)) {
      const target = join(file, "..", m[1] as string).slice(join(ROOT, "lib").length + 1);
      const folder = target.split("/")[0] as string;
      if (target.includes("/") && folder !== name) out.add(folder);
    }
  }
  return out;
}

describe("the map of the code (docs/architecture.md)", () => {
  it("lists every folder of lib/ in order, bottom layer first", () => {
    const dirs = readdirSync(join(ROOT, "lib")).filter((d) =>
      statSync(join(ROOT, "lib", d)).isDirectory(),
    );
    for (const d of dirs) expect(section, `lib/${d} in the map`).toContain(`\`lib/${d}\``);
    expect(libNames[0]).toBe("core");
    for (const name of libNames) expect(dirs).toContain(name);
  });

  it("allows every import the code makes", () => {
    libRows.forEach((r, i) => {
      const allowed = allowedOf(r, i);
      for (const used of importedFolders(r.folder.slice(4))) {
        if (used === "types") continue;
        expect(allowed, `${r.folder} imports lib/${used}`).toContain(used);
      }
    });
  });

  it("is what biome.json enforces", () => {
    const biome = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8")) as {
      overrides: Array<{
        includes: string[];
        linter?: { rules?: { style?: Record<string, unknown> } };
      }>;
    };
    libRows.forEach((r, i) => {
      const denied = libNames.filter(
        (n) => n !== r.folder.slice(4) && !allowedOf(r, i).includes(n),
      );
      const override = biome.overrides.find((o) => o.includes.includes(`${r.folder}/**`));
      if (denied.length === 0) return; // the top layer (lib/cli) needs no rule
      expect(override, `an override for ${r.folder}`).toBeDefined();
      const rule = override?.linter?.rules?.style?.noRestrictedImports as
        | { options: { patterns: Array<{ group: string[] }> } }
        | undefined;
      const groups = rule?.options.patterns.flatMap((p) => p.group) ?? [];
      // `../**` (lib/core's rule) denies every folder outside.
      const denies = (d: string) => groups.includes("../**") || groups.includes(`../${d}/**`);
      for (const d of denied) expect(denies(d), `${r.folder} may not import lib/${d}`).toBe(true);
      for (const a of allowedOf(r, i))
        expect(denies(a), `${r.folder} may import lib/${a}`).toBe(false);
    });
  });
});

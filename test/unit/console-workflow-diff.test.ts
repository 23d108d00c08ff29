/**
 * The workflow page's pure parts: the unified diff of two versions' YAML (added and removed
 * lines marked, long unchanged runs folded with their count) and instants in a schedule's zone.
 */
import { describe, expect, it } from "vitest";
import { unifiedRows } from "../../console/src/components/workflow/line-diff.js";

const lines = (n: number, prefix = "line") =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n");

describe("unifiedRows", () => {
  it("gives no rows for identical texts", () => {
    expect(unifiedRows("a\nb\n", "a\nb\n")).toEqual([]);
  });

  it("marks a changed line as removed then added, with 3 lines of context (a fold of one line is shown whole)", () => {
    const before = `${lines(10)}\n`;
    const after = `${before.replace("line 5\n", "line five\n")}`;
    expect(unifiedRows(before, after)).toEqual([
      { mark: " ", text: "line 1" },
      { mark: " ", text: "line 2" },
      { mark: " ", text: "line 3" },
      { mark: " ", text: "line 4" },
      { mark: "-", text: "line 5" },
      { mark: "+", text: "line five" },
      { mark: " ", text: "line 6" },
      { mark: " ", text: "line 7" },
      { mark: " ", text: "line 8" },
      { mark: "…", text: "2 unchanged lines" },
    ]);
  });

  it("keeps a short unchanged run between two changes whole", () => {
    const rows = unifiedRows("a\nx\ny\nb\n", "A\nx\ny\nB\n");
    expect(rows.map((r) => `${r.mark}${r.text}`)).toEqual(["-a", "+A", " x", " y", "-b", "+B"]);
  });

  it("folds a long unchanged middle, keeping 3 lines after and before each change", () => {
    const before = `first\n${lines(20)}\nlast\n`;
    const after = `FIRST\n${lines(20)}\nLAST\n`;
    const rows = unifiedRows(before, after);
    expect(rows.filter((r) => r.mark === " ")).toHaveLength(6);
    expect(rows.find((r) => r.mark === "…")?.text).toBe("14 unchanged lines");
  });

  it("handles texts without a final newline", () => {
    expect(unifiedRows("a", "b").map((r) => `${r.mark}${r.text}`)).toEqual(["-a", "+b"]);
  });
});

/** ANSI escape sequences in task logs → styled segments (console/src/model/ansi.ts). */
import { describe, expect, it } from "vitest";
import {
  cleanEscapes,
  PLAIN,
  paletteColor,
  styleLine,
  styleLines,
} from "../../console/src/model/ansi.js";

const ESC = "\x1b";

describe("styleLines", () => {
  it("turns SGR colours, bold and underline into classes, and resets on 0", () => {
    const { lines, state } = styleLines([
      `${ESC}[31mred${ESC}[0m plain`,
      `${ESC}[1;4;32mbold green underlined${ESC}[22m not bold`,
      `${ESC}[44;97mon blue${ESC}[39;49m`,
    ]);
    expect(lines[0]).toEqual([
      { text: "red", classes: ["ansi-red-fg"] },
      { text: " plain", classes: [] },
    ]);
    expect(lines[1]).toEqual([
      { text: "bold green underlined", classes: ["ansi-green-fg", "ansi-bold", "ansi-underline"] },
      { text: " not bold", classes: ["ansi-green-fg", "ansi-underline"] },
    ]);
    expect(lines[2]).toEqual([
      // Underline, set on the line before and not reset, still applies.
      { text: "on blue", classes: ["ansi-bright-white-fg", "ansi-blue-bg", "ansi-underline"] },
    ]);
    // Underline is still on: the next line starts underlined.
    expect(state.decorations).toEqual(["underline"]);
  });

  it("carries a colour across lines, and across pages through the end state", () => {
    const page1 = styleLines(["start", `tail of page 1 ${ESC}[33m`]);
    expect(page1.lines[1]).toEqual([{ text: "tail of page 1 ", classes: [] }]);
    const page2 = styleLines(["yellow from page 1", `still${ESC}[0m done`], page1.state);
    expect(page2.lines[0]).toEqual([{ text: "yellow from page 1", classes: ["ansi-yellow-fg"] }]);
    expect(page2.lines[1]).toEqual([
      { text: "still", classes: ["ansi-yellow-fg"] },
      { text: " done", classes: [] },
    ]);
    expect(page2.state).toBe(PLAIN);
  });

  it("leaves plain lines as one unstyled segment, and an empty line empty", () => {
    expect(styleLines(["just text", ""]).lines).toEqual([[{ text: "just text", classes: [] }], []]);
  });

  it("drops cursor moves, erase-line, window titles and other escapes, keeping the text", () => {
    const { lines } = styleLines([
      `${ESC}[2K${ESC}[1Aredrawn`,
      `${ESC}]0;my title${ESC}\\after title`,
      `${ESC}]8;;http://x${ESC}\\link${ESC}]8;;${ESC}\\`,
      `${ESC}(Bcharset ${ESC}=keypad ${ESC}7saved`,
      "bell\x07 and backspace\x08 gone",
      `cut at the end ${ESC}[3`,
    ]);
    expect(lines.map((l) => l.map((s) => s.text).join(""))).toEqual([
      "redrawn",
      "after title",
      "link",
      "charset keypad saved",
      "bell and backspace gone",
      "cut at the end ",
    ]);
  });

  it("keeps what follows the last carriage return (a progress bar), with its style", () => {
    const { lines } = styleLines([`10%\r${ESC}[36m50%\r100%\r`]);
    expect(lines[0]).toEqual([{ text: "100%", classes: ["ansi-cyan-fg"] }]);
  });

  it("gives 256-palette and true colours as CSS colours", () => {
    const { segments } = styleLine(`${ESC}[38;5;196mpal${ESC}[48;2;1;2;3mtrue`, PLAIN);
    expect(segments[0]).toEqual({ text: "pal", classes: [], color: "rgb(255, 0, 0)" });
    expect(segments[1]).toMatchObject({ text: "true", background: "rgb(1, 2, 3)" });
    // The first 16 palette entries are the named colours.
    expect(styleLine(`${ESC}[38;5;1mx`, PLAIN).segments[0]?.classes).toEqual(["ansi-red-fg"]);
  });

  it("never produces markup: text with < and & stays text", () => {
    const { lines } = styleLines([`${ESC}[31m<b>&amp;</b>`]);
    expect(lines[0]?.[0]?.text).toBe("<b>&amp;</b>");
  });
});

describe("paletteColor and cleanEscapes", () => {
  it("computes xterm's cube and grey ramp", () => {
    expect(paletteColor(16)).toBe("rgb(0, 0, 0)");
    expect(paletteColor(231)).toBe("rgb(255, 255, 255)");
    expect(paletteColor(232)).toBe("rgb(8, 8, 8)");
    expect(paletteColor(255)).toBe("rgb(238, 238, 238)");
  });

  it("keeps CSI sequences for the SGR parser and tabs", () => {
    expect(cleanEscapes(`a\t${ESC}[31mb`)).toBe(`a\t${ESC}[31mb`);
  });

  it("styles a page of 10,000 lines quickly", () => {
    const lines = Array.from({ length: 10_000 }, (_, n) =>
      n % 10 === 0 ? `${ESC}[32mok${ESC}[0m line ${n}` : `line ${n}`,
    );
    const t = performance.now();
    styleLines(lines);
    expect(performance.now() - t).toBeLessThan(500);
  });
});

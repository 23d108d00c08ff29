// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  quoteForShell,
  type ShellReplacement,
  substituteShell,
} from "../../lib/core/shell-quote.js";
import { ParamError } from "../../lib/core/time-params.js";

/** /bin/sh (dash here) always; bash too when present, since it reads `$'…'` and more. */
const SHELLS = ["/bin/sh", ...(existsSync("/bin/bash") ? ["/bin/bash"] : [])];

const HOSTILE = [
  "$(touch X)",
  "`touch X`",
  "'; touch X; '",
  '"; touch X; "',
  "\\",
  "line1\nline2",
  "$HOME",
  "",
  "'",
  '"',
  "\\'",
  "x'y\"z\\w$`",
  "a b\t c",
  "*",
  "~",
  "-n",
  "}",
  ")",
  "esac",
  "!x",
  "\n",
  "ünï ✓",
  "${HOME}",
  "';touch X;'\\",
];

const work = mkdtempSync(join(tmpdir(), "shoal-shell-quote-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every `${v}` in `template` replaced by `value` through substituteShell. */
function build(template: string, value: string): string {
  const reps: ShellReplacement[] = [...template.matchAll(/\$\{v\}/g)].map((m) => ({
    start: m.index,
    end: m.index + 4,
    value,
  }));
  return substituteShell(template, reps);
}

/** Runs `command` with `sh -c` in an empty directory; fails the test if it created a file. */
function run(shell: string, command: string): string {
  let out: string;
  try {
    out = execFileSync(shell, ["-c", command], {
      cwd: work,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/home/shoal-test" },
    });
  } catch (err) {
    out = `<exit: ${(err as { stderr?: string }).stderr ?? String(err)}>`;
  }
  const created = readdirSync(work);
  for (const f of created) rmSync(join(work, f), { recursive: true, force: true });
  expect(created, `${shell} -c ${JSON.stringify(command)} created files`).toEqual([]);
  return out;
}

// printf, not echo: dash's echo interprets backslashes, which would test echo, not quoting.
const EXACT: Array<[string, string, (v: string) => string]> = [
  ["bare", "printf %s ${v}", (v) => v],
  ["single quotes", "printf %s '${v}'", (v) => v],
  ["double quotes", 'printf %s "${v}"', (v) => v],
  ["inside a word", "printf %s x${v}y", (v) => `x${v}y`],
  ["inside $( )", 'printf %s "$(printf %s ${v})"', (v) => v.replace(/\n+$/, "")],
  [
    "double quotes in $( ) in double quotes",
    'printf %s "$(printf %s "${v}")"',
    (v) => v.replace(/\n+$/, ""),
  ],
  ["single quotes in $( )", "printf %s \"$(printf %s '${v}')\"", (v) => v.replace(/\n+$/, "")],
  ["${x:-…} default word", "printf %s ${x:-${v}}", (v) => v],
  ["${x:-…} inside double quotes", 'printf %s "${x:-${v}}"', (v) => v],
  ["twice, in two contexts", "printf %s ${v}'${v}'", (v) => v + v],
  [
    "case pattern inside $( )",
    'printf %s "$(case a in a) printf %s ${v};; esac)"',
    (v) => v.replace(/\n+$/, ""),
  ],
  ["here-document", "cat <<EOF\n[${v}]\nEOF", (v) => `[${v}]\n`],
  ["quoted here-document", "cat <<'EOF'\n[${v}]\nEOF", (v) => `[${v}]\n`],
  ["<<- here-document", "cat <<-EOF\n\t[${v}]\n\tEOF", (v) => `[${v}]\n`],
  ["after a here-document", "cat <<EOF; printf %s ${v}\nbody\nEOF", (v) => `body\n${v}`],
  ["comment", "printf ok # ${v}", () => "ok"],
];

describe("substituteShell: hostile values print exactly and never run", () => {
  for (const shell of SHELLS) {
    describe(shell, () => {
      it.each(EXACT)("%s", (name, template, want) => {
        for (const value of HOSTILE) {
          const out = run(shell, build(template, value));
          // bash pairs ' while parsing "${x:-…}" (dash does not): an odd one is a syntax error.
          if (shell.endsWith("bash") && name.includes("inside double") && value.includes("'")) {
            expect([want(value), "<exit:"]).toContain(out.startsWith("<exit:") ? "<exit:" : out);
            continue;
          }
          expect(out, `${template} with ${JSON.stringify(value)}`).toBe(want(value));
        }
      });

      it("a backslash before the reference stays a literal backslash", () => {
        for (const value of HOSTILE) {
          expect(run(shell, build("printf %s \\${v}", value))).toBe(`\\${value}`);
          expect(run(shell, build('printf %s "\\${v}"', value))).toBe(`\\${value}`);
          expect(run(shell, build("cat <<EOF\n\\${v}\nEOF", value))).toBe(`\\${value}\n`);
        }
      });

      it("a lone $ before the reference cannot join it", () => {
        for (const value of HOSTILE) {
          const bare = run(shell, build("printf %s $${v}", value));
          // dash prints `$''` as "$", bash reads it as an empty $'' string.
          expect([`$${value}`, value]).toContain(bare);
          expect(run(shell, build('printf %s "$${v}"', value))).toBe(`$${value}`);
        }
      });

      it("comments swallow the value, newlines included", () => {
        for (const value of HOSTILE) {
          expect(run(shell, build("# ${v}\nprintf done", value))).toBe("done");
        }
      });
    });
  }

  it("bash $'…' strings hold the value exactly", () => {
    if (!SHELLS.includes("/bin/bash")) return;
    for (const value of HOSTILE) {
      expect(run("/bin/bash", build("printf %s $'<${v}>'", value))).toBe(`<${value}>`);
      expect(run("/bin/bash", build("printf %s $'\\${v}'", value))).toBe(`\\${value}`);
    }
  });

  it("dash, which lacks $'…', still runs nothing", () => {
    for (const value of HOSTILE) run("/bin/sh", build("printf %s $'<${v}>'", value));
  });

  it("integers work in arithmetic", () => {
    for (const shell of SHELLS) {
      expect(run(shell, build("printf %s $((${v} + 1))", "41"))).toBe("42");
      expect(run(shell, build('printf %s "$(( ${v} * 2 ))"', "-4"))).toBe("-8");
    }
  });
});

describe("substituteShell: seeded fuzz of shell fragments", () => {
  // Random mixes of quotes, substitutions, here-documents, comments and case: whatever the
  // shell makes of them (mostly syntax errors), a value never runs `touch X`.
  const blocks = [
    "echo ",
    "'",
    '"',
    "$(",
    ")",
    "${x:-",
    "}",
    "\\",
    "$",
    "#",
    "\n",
    "<<EOF\n",
    "<<'EOF'\n",
    "EOF\n",
    "case a in a) ",
    ";; esac",
    "((",
    "))",
    "$((",
    ";",
    " ",
    "${v}",
    "${v}",
    "$'",
    "`",
    "(",
    "x",
    "<",
    "|",
    "\t",
    "esac",
    "in ",
    "\\\n",
  ];
  const values = [
    "$(touch X)",
    "`touch X`",
    "';touch X;'",
    '";touch X;"',
    "\ntouch X\n",
    "\\",
    "')",
    "EOF\ntouch X",
    ");touch X;(",
    "}; touch X; {",
    "\\';touch X;#",
    "7",
  ];
  it("never runs a value", () => {
    let seed = 20261121;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let ran = 0;
    for (let k = 0; k < 120; k++) {
      let template = "";
      for (let j = 3 + next(10); j > 0; j--) template += blocks[next(blocks.length)];
      const value = values[next(values.length)] as string;
      let command: string;
      try {
        command = build(`${template}\${v}`, value);
      } catch (err) {
        expect(err).toBeInstanceOf(ParamError);
        continue;
      }
      ran++;
      for (const shell of SHELLS) run(shell, command);
    }
    expect(ran).toBeGreaterThan(60);
  });
});

describe("substituteShell: references it refuses", () => {
  const refuse = (template: string, value: string, message: string) => {
    expect(() => build(template, value)).toThrow(ParamError);
    expect(() => build(template, value)).toThrow(message);
  };

  it("non-integers in arithmetic, where quotes do not quote", () => {
    refuse("echo $((${v}))", "$(touch X)", "${v} is used in shell arithmetic");
    refuse("echo $(( '${v}' ))", "1 + 1", "${v} is used in shell arithmetic");
    refuse("(( ${v} > 1 ))", "a[$(touch X)]", "${v} is used in shell arithmetic");
    expect(build("echo $(( '${v}' ))", "12")).toBe("echo $(( '12' ))");
  });

  it("backquotes", () => {
    refuse("echo `echo ${v}`", "x", "inside a backquoted command substitution");
    refuse('echo "`echo ${v}`"', "x", "use $( ) instead");
  });

  it("here-document delimiters", () => {
    refuse("cat <<${v}\nx\n", "EOF", "part of a here-document delimiter");
    refuse("cat <<'${v}'\nx\n", "EOF", "part of a here-document delimiter");
  });

  it("values that would end a here-document early", () => {
    for (const template of ["cat <<EOF\n${v}\nEOF", "cat <<'EOF'\n${v}\nEOF"]) {
      refuse(template, "EOF", "would end the here-document <<EOF early");
      refuse(template, "x\nEOF\ntouch X", "would end the here-document <<EOF early");
    }
    refuse("cat <<-EOF\n${v}\nEOF", "\t\tEOF", "would end the here-document <<EOF early");
    refuse("cat <<EOF\nE${v}\nEOF", "OF", "would end the here-document <<EOF early");
    // Not a whole line: fine.
    expect(build("cat <<EOF\nx${v}\nEOF", "EOF")).toBe("cat <<EOF\nxEOF\nEOF");
    expect(build("cat <<'EOF'\n${v}\nEOF", "EOF ")).toBe("cat <<'EOF'\nEOF \nEOF");
  });

  it("a lone $ before the reference in a here-document", () => {
    refuse("cat <<EOF\n$${v}\nEOF", "x", 'follows a lone "$" in a here-document');
  });
});

describe("substituteShell: bookkeeping", () => {
  it("leaves text without replacements untouched", () => {
    const text = "echo \"${HOME}\" 'it''s' $(date) <<EOF\n${x}\nEOF\n";
    expect(substituteShell(text, [])).toBe(text);
  });

  it("accepts replacements in any order and labels them in errors", () => {
    const text = "a ${x} b ${y}";
    const out = substituteShell(text, [
      { start: 9, end: 13, value: "2" },
      { start: 2, end: 6, value: "1 1" },
    ]);
    expect(out).toBe("a '1 1' b '2'");
    expect(() =>
      substituteShell("echo `${x}`", [{ start: 6, end: 10, value: "", label: "${name}" }]),
    ).toThrow("${name} is inside a backquoted");
  });

  it("rejects overlapping or out-of-range replacements", () => {
    expect(() =>
      substituteShell("abcdef", [
        { start: 0, end: 3, value: "" },
        { start: 2, end: 4, value: "" },
      ]),
    ).toThrow(RangeError);
    expect(() => substituteShell("abc", [{ start: 2, end: 9, value: "" }])).toThrow(RangeError);
  });

  it("keeps tracking quotes and parentheses after $( ), case and comments", () => {
    const t = "x=$(case $a in (b) echo ')';; c) echo \"(\";; esac) # it's\necho ${v}";
    expect(build(t, "a'b")).toBe(
      "x=$(case $a in (b) echo ')';; c) echo \"(\";; esac) # it's\necho 'a'\\''b'",
    );
  });
});

describe("quoteForShell", () => {
  it("quotes for each context", () => {
    expect(quoteForShell("it's", "unquoted")).toBe("'it'\\''s'");
    expect(quoteForShell("", "unquoted")).toBe("''");
    expect(quoteForShell("it's", "single")).toBe("it'\\''s");
    expect(quoteForShell('a\\"$`b', "double")).toBe('a\\\\\\"\\$\\`b');
    expect(quoteForShell("it's", "ansi-c")).toBe("''it'\\''s'$'");
    expect(quoteForShell("-7", "arithmetic")).toBe("-7");
    expect(() => quoteForShell("7a", "arithmetic")).toThrow(ParamError);
    expect(quoteForShell("\"\\$`'", "heredoc")).toBe("\"\\\\\\$\\`'");
    expect(quoteForShell("a\nb'", "heredoc-literal")).toBe("a\nb'");
    expect(quoteForShell("a\nb", "comment")).toBe("a b");
  });
});

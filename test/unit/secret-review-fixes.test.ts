// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${…} is Shoal's reference syntax, not a JS template
/**
 * Secrets rules a review asked for (docs/secrets.md): an HTTP task that sends a secret takes its
 * destination from no parameter; `${secret:…}` in workflow and run parameters is refused at the
 * API; a value shorter than 4 characters fails the attempt; OUT parameters are read from the raw
 * output, so a short-looking value never mangles `${setValue(…)}`.
 */
import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../../lib/core/model.js";
import { parseRunRequest, parseWorkflowDefinition } from "../../lib/core/validate.js";
import { prepareAttemptTask } from "../../lib/secrets/attempt-secrets.js";
import { SecretMasker } from "../../lib/secrets/mask.js";
import { checkMaskable } from "../../lib/secrets/resolve.js";
import type { SecretSource } from "../../lib/secrets/secret-source.js";

type Detail = { path: string; message: string };

function problems(parse: () => unknown): Detail[] {
  try {
    parse();
    return [];
  } catch (e) {
    return (e as { details?: Detail[] }).details ?? [];
  }
}

const http =
  (url: string, extra: Record<string, unknown> = {}) =>
  () =>
    parseWorkflowDefinition({ tasks: [{ code: "h", type: "HTTP", url, ...extra }] });

describe("an HTTP task that uses secrets takes no destination from a parameter", () => {
  it.each([
    "http://${host}/x?k=${secret:pw}",
    "https://api.example.com:${port}/x?k=${secret:pw}",
    "${scheme}://api.example.com/x?k=${secret:pw}",
    "https://${user}@api.example.com/x?k=${secret:pw}",
    "${base}/x?k=${secret:pw}",
    "https://api.$[yyyyMMdd].example.com/?k=${secret:pw}",
    "https://api.example.com?k=${secret:pw}&h=${host}",
  ])("refuses %s, naming tasks[0].url and the rule", (url) => {
    // Some of these are not valid URLs either (that is its own problem at the same field).
    expect(problems(http(url))).toContainEqual({
      path: "tasks[0].url",
      message: expect.stringContaining(
        "is not allowed before the URL's path in an HTTP task that uses secrets: a run's parameters could send the secret to another host",
      ),
    });
  });

  it("counts secrets in headers and body too", () => {
    const url = "http://${host}/x";
    expect(problems(http(url, { headers: { authorization: "Bearer ${secret:t}" } }))).toEqual([
      expect.objectContaining({ path: "tasks[0].url" }),
    ]);
    expect(problems(http(url, { body: "${secret:t}" }))).toEqual([
      expect.objectContaining({ path: "tasks[0].url" }),
    ]);
  });

  it.each([
    [
      "parameters in the path and query",
      "https://api.example.com/${path}/x?d=$[yyyyMMdd]&k=${secret:pw}",
    ],
    ["a parameter host without secrets", "http://${host}/x"],
  ])("allows %s", (_what, url) => {
    expect(problems(http(url))).toEqual([]);
  });
});

describe("${secret:…} in workflow and run parameters", () => {
  it("a workflow parameter value holding one is a 400 naming it", () => {
    const p = problems(() =>
      parseWorkflowDefinition({
        params: { ok: "x", pw: "pre ${secret:db-password}" },
        tasks: [{ code: "t", type: "SHELL", command: "echo" }],
      }),
    );
    expect(p).toEqual([
      {
        path: "params.pw",
        message:
          "${secret:db-password} is not resolved here: parameter values are stored and shown as they are; put the reference in the command (or use the task's secrets field)",
      },
    ]);
  });

  it("a run parameter holding one is a 400 naming it; other values pass", () => {
    const def = parseWorkflowDefinition({ tasks: [{ code: "t", type: "SHELL", command: "echo" }] });
    const p = problems(() => parseRunRequest({ params: { x: "${secret:a}" } }, def));
    expect(p).toEqual([
      {
        path: "params.x",
        message:
          "${secret:a} is not resolved here: a run's parameters are plain text and never resolve secrets; put the reference in the task definition (command, or the task's secrets field)",
      },
    ]);
    expect(parseRunRequest({ params: { x: "${a}", y: "$secret" } }, def).params).toEqual({
      x: "${a}",
      y: "$secret",
    });
  });
});

describe("values too short to mask", () => {
  const source = (values: Record<string, string>): SecretSource => ({
    get: async (n) => values[n.base],
    where: (n) => `test ${n.base}`,
  });
  const task = {
    code: "t",
    type: "SHELL",
    command: "echo ${secret:short}",
  } as unknown as WorkflowDefinition["tasks"][number];

  it("a value of 1 to 3 characters fails the attempt, naming the secret", async () => {
    for (const v of ["a", "ab", "abc", "é€x"]) {
      await expect(
        prepareAttemptTask(
          task as never,
          (t) => t,
          () => source({ short: v }),
        ),
      ).rejects.toThrow(
        "secret 'short' is shorter than 4 characters; it cannot be masked reliably",
      );
    }
  });

  it("4 characters or more, and the empty value, are used", async () => {
    for (const v of ["abcd", ""]) {
      const r = await prepareAttemptTask(
        task as never,
        (t) => t,
        () => source({ short: v }),
      );
      expect(Object.values(r.env)).toEqual([v]);
    }
    expect(() => checkMaskable(new Map([["k", "1234"]]))).not.toThrow();
  });
});

describe("raw lines for OUT parameters", () => {
  it("a stream hands on each raw line before masking, and masks what it gives out", () => {
    const raw: string[] = [];
    const s = new SecretMasker(["zq9X"]).withRawLines((l) => raw.push(l)).stream();
    const out = s.push("${setValue(a=zq") + s.push("9X)}\n${setValue(b=ok)}\npartial") + s.end();
    expect(raw).toEqual(["${setValue(a=zq9X)}", "${setValue(b=ok)}", "partial"]);
    expect(out).toBe("${setValue(a=***)}\n${setValue(b=ok)}\npartial");
  });

  it("a plain stream has no tap, and masking is the same", () => {
    const m = new SecretMasker(["zq9X"]);
    const s = m.stream();
    expect(s.push("x zq9X y\n") + s.end()).toBe("x *** y\n");
    expect(m.withRawLines(() => {}).mask("zq9X")).toBe("***");
  });
});

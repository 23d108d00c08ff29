// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/** Secret references: names, where they may stand, and their checks at PUT. */
import { describe, expect, it } from "vitest";
import {
  findSecretReferences,
  parseSecretName,
  SECRET_NAME_RULE,
  secretReferenceIssues,
  taskSecretNames,
} from "../../lib/core/secret-references.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

describe("parseSecretName", () => {
  it.each([
    ["db-password", { store: "secrets-manager", id: "db-password", base: "db-password" }],
    [
      "prod/db#password",
      { store: "secrets-manager", id: "prod/db", base: "prod/db", jsonKey: "password" },
    ],
    [
      "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
      {
        store: "secrets-manager",
        id: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
      },
    ],
    ["ssm:/prod/db/pw", { store: "ssm", id: "/prod/db/pw", base: "ssm:/prod/db/pw" }],
    ["ssm:plain_name.v2", { store: "ssm", id: "plain_name.v2" }],
  ])("%s", (name, parts) => {
    expect(parseSecretName(name)).toMatchObject({ full: name, ...parts });
  });

  it.each([
    "",
    "has space",
    "ssm:",
    "ssm:/a//b",
    "quote'd",
    "a#",
    "a#b#c",
    "arn:aws:s3:::bucket",
    "x".repeat(513),
    "$(id)",
  ])("refuses %j", (name) => {
    expect(parseSecretName(name)).toBe(SECRET_NAME_RULE);
  });
});

describe("findSecretReferences and taskSecretNames", () => {
  it("finds references with their offsets", () => {
    expect(findSecretReferences("a ${secret:x} ${y} ${secret:ssm:/p}")).toEqual([
      { start: 2, end: 13, name: "x" },
      { start: 19, end: 35, name: "ssm:/p" },
    ]);
  });
  it("lists a SHELL task's names once, references then the secrets field", () => {
    expect(
      taskSecretNames({
        type: "SHELL",
        command: "${secret:a} ${secret:b} ${secret:a}",
        secrets: { PW: "c", OTHER: "a" },
      }),
    ).toEqual(["a", "b", "c"]);
  });
  it("reads an HTTP task's url, headers and body, never its other fields", () => {
    expect(
      taskSecretNames({
        type: "HTTP",
        url: "https://h/?t=${secret:t}",
        headers: { authorization: "Bearer ${secret:tok}" },
        body: "${secret:b}",
        params: { p: "${secret:never}" },
      }),
    ).toEqual(["t", "tok", "b"]);
  });
});

describe("checks at PUT", () => {
  const shell = (extra: Record<string, unknown>) => ({
    tasks: [{ code: "t", type: "SHELL", command: "echo", ...extra }],
  });
  const problems = (def: unknown) => {
    try {
      parseWorkflowDefinition(def);
      return [];
    } catch (e) {
      return (e as { details?: Array<{ path: string; message: string }> }).details ?? [];
    }
  };

  it("accepts good names in a command, the secrets field, and HTTP fields", () => {
    expect(
      problems(
        shell({ command: "psql -p ${secret:prod/db#password}", secrets: { PW: "ssm:/a/b" } }),
      ),
    ).toEqual([]);
    expect(
      problems({
        tasks: [
          {
            code: "h",
            type: "HTTP",
            url: "https://api.example.com/x?key=${secret:api-key}",
            headers: { authorization: "Bearer ${secret:tok}" },
            body: '{"pw": "${secret:pw}"}',
          },
        ],
      }),
    ).toEqual([]);
  });

  it("names the field and the rule of a bad name", () => {
    expect(problems(shell({ command: "echo ${secret:bad name}" }))).toEqual([
      {
        path: "tasks[0].command",
        message: `\${secret:bad name}: the name ${SECRET_NAME_RULE}`,
      },
    ]);
    expect(problems(shell({ secrets: { PW: "no good", SHOAL_X: "a", "1x": "a" } }))).toEqual(
      expect.arrayContaining([
        { path: "tasks[0].secrets.PW", message: SECRET_NAME_RULE },
        { path: "tasks[0].secrets.SHOAL_X", message: "must not start with SHOAL_ (Shoal's own)" },
        {
          path: "tasks[0].secrets.1x",
          message: "must be an environment variable name (^[A-Za-z_][A-Za-z0-9_]{0,127}$)",
        },
      ]),
    );
  });

  it("refuses references where they would never be resolved", () => {
    const issues = secretReferenceIssues({
      type: "LAMBDA",
      payload: '{"pw": "${secret:pw}"}',
      params: { p: "${secret:x}" },
    });
    expect(issues.map((i) => i.path.join("."))).toEqual(["payload", "params.p"]);
    expect(issues[1]?.message).toContain("parameter values are stored and shown as they are");
    expect(problems(shell({ params: { pw: "${secret:db}" } }))).toEqual([
      expect.objectContaining({ path: "tasks[0].params.pw" }),
    ]);
  });

  it("only SHELL tasks have a secrets field", () => {
    const p = problems({
      tasks: [{ code: "h", type: "HTTP", url: "https://x.example", secrets: { A: "a" } }],
    });
    expect(p.map((d) => d.path)).toContain("tasks[0].secrets");
  });
});

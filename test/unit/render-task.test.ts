// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import type { TaskDefinition } from "../../lib/core/model.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { dryRunOutcome, MASK, renderingLines, renderTask } from "../../lib/tasks/render-task.js";

/** 00:30 in Paris on 2 November 2026 (23:30 UTC on the 1st). */
const BASE = DateTime.fromISO("2026-11-02T00:30", { zone: "Europe/Paris" }).toMillis();
const PARIS = { baseMs: BASE, zone: "Europe/Paris" };

function task(t: Record<string, unknown>): TaskDefinition {
  const def = parseWorkflowDefinition({
    tasks: [
      { code: "up", type: "SHELL", command: "true" },
      { code: "t", upstream: ["up"], ...t },
      { code: "a", type: "SHELL", command: "true", upstream: ["t"] },
      { code: "b", type: "SHELL", command: "true", upstream: ["t"] },
    ],
  });
  return def.tasks[1] as TaskDefinition;
}

describe("renderTask: worker tasks, as the worker substitutes them", () => {
  it("SHELL: the quoted command in the zone, and references left as written", () => {
    const r = renderTask(
      task({ type: "SHELL", command: "echo ${day} $[yyyyMMdd] ${jobId} $HOME ${HOME}" }),
      { day: "it's", region: "eu" },
      PARIS,
    );
    expect(r).toEqual({
      type: "SHELL",
      params: { day: "it's", region: "eu" },
      rendered: { type: "SHELL", command: "echo 'it'\\''s' '20261102' ${jobId} $HOME ${HOME}" },
      unresolved: ["jobId", "HOME"],
    });
    expect(renderingLines(r)).toEqual([
      "parameters:",
      "  day = it's",
      "  region = eu",
      "command:",
      "  echo 'it'\\''s' '20261102' ${jobId} $HOME ${HOME}",
      "left as written (no such parameter: a shell variable, or an OUT parameter of an upstream task that has not run): ${jobId}, ${HOME}",
    ]);
  });

  it("HTTP: secret-like headers and parameters masked, wherever the secrets appear", () => {
    const r = renderTask(
      task({
        type: "HTTP",
        method: "POST",
        url: "http://127.0.0.1:9/hook?key=${api_token}&day=$[yyyyMMdd]",
        headers: {
          Authorization: "Bearer ${api_token}",
          "X-Api-Key": "k-123456",
          "content-type": "application/json",
        },
        body: '{"token": "${api_token}", "who": "${who}"}',
      }),
      { api_token: "s3cr3t-value", who: "me" },
      PARIS,
    );
    expect(r.params).toEqual({ api_token: MASK, who: "me" });
    expect(r.rendered).toEqual({
      type: "HTTP",
      method: "POST",
      url: `http://127.0.0.1:9/hook?key=${MASK}&day=20261102`,
      headers: { Authorization: MASK, "X-Api-Key": MASK, "content-type": "application/json" },
      body: `{"token": "${MASK}", "who": "me"}`,
    });
    expect(JSON.stringify(renderingLines(r))).not.toContain("s3cr3t");
    expect(JSON.stringify(renderingLines(r))).not.toContain("k-123456");
    expect(renderingLines(r)).toContain(`  POST http://127.0.0.1:9/hook?key=${MASK}&day=20261102`);
  });

  it("secrets never show, whatever SHELL quoting or JSON escaping made of them", () => {
    const secret = "zq'xv\"w$rd\\x";
    const params = { db_password: secret, dsn: `pg://u:${secret}@h/db`, who: "me" };
    const shell = renderTask(
      task({
        type: "SHELL",
        command:
          "psql --pw=${db_password} --pw2='${db_password}' \"--pw3=${db_password}\" ${dsn} ${who}\ncat <<EOF\n${db_password}\nEOF",
      }),
      params,
      PARIS,
    );
    expect(shell.params).toEqual({ db_password: MASK, dsn: `pg://u:${MASK}@h/db`, who: "me" });
    expect(shell.rendered).toEqual({
      type: "SHELL",
      command: `psql --pw='${MASK}' --pw2='${MASK}' "--pw3=${MASK}" 'pg://u:${MASK}@h/db' 'me'\ncat <<EOF\n${MASK}\nEOF`,
    });
    const lambda = renderTask(
      task({
        type: "LAMBDA",
        functionName: "fn",
        payload: '{"token": "${api_token}", "dsn": "${dsn}", "n": ${n}}',
      }),
      { api_token: 'qj"ky\\x', dsn: 'pg://u:qj"ky\\x@h', n: "2" },
      PARIS,
    );
    expect(lambda.rendered).toMatchObject({
      payload: `{"token": "${MASK}", "dsn": "pg://u:${MASK}@h", "n": 2}`,
    });
    const http = renderTask(
      task({
        type: "HTTP",
        method: "POST",
        url: "http://127.0.0.1:9/x?k=${api_key}",
        body: "key=${api_key}&who=${who}",
      }),
      { api_key: "a&b=c\\d$e", who: "me" },
      PARIS,
    );
    expect(http.rendered).toMatchObject({
      url: `http://127.0.0.1:9/x?k=${MASK}`,
      body: `key=${MASK}&who=me`,
    });
    for (const r of [shell, lambda, http]) {
      const text = JSON.stringify(r) + renderingLines(r).join("\n");
      for (const leak of ["zq", "xv", "w$rd", "qj", "ky", "a&b", "$e"]) {
        expect(text, leak).not.toContain(leak);
      }
    }
  });

  it("decides with the real values: errors are a run's, masked; a rendering masking breaks is hidden", () => {
    // A real run fails (the secret ends the here-document): the error holds no secret.
    const eof = renderTask(
      task({ type: "SHELL", command: "cat <<EOF\n${db_password}\nEOF" }),
      { db_password: "x\nEOF\nrm -rf /" },
      PARIS,
    );
    expect(eof.error).toBeDefined();
    expect(eof.rendered).toBeUndefined();
    expect(JSON.stringify(eof)).not.toContain("rm -rf");
    // A real run renders, `****` does not (shell arithmetic): nothing shown, no error.
    const arith = renderTask(
      task({ type: "SHELL", command: "echo $((${pin_secret} + 1))" }),
      { pin_secret: "4711" },
      PARIS,
    );
    expect(arith.error).toBeUndefined();
    expect(arith.rendered).toBeUndefined();
    expect(arith.hidden).toMatch(
      /^not shown: with its secret parameters replaced by \*\*\*\* the task does not render \(/,
    );
    expect(renderingLines(arith)).toContain(arith.hidden);
    expect(dryRunOutcome(arith)).toEqual({ state: "SUCCESS" });
    expect(JSON.stringify(arith)).not.toContain("4711");
    // A SWITCH decides with the real value; its error quotes the value masked.
    const sw = renderTask(
      task({
        type: "SWITCH",
        cases: [
          { condition: 'api_token == "abc\\"d"', next: "a" },
          { condition: "api_token > 3", next: "a" },
        ],
        defaultNext: "b",
      }),
      { api_token: 'abc"d' },
      PARIS,
    );
    expect(sw.rendered).toMatchObject({
      cases: [
        { value: true },
        {
          value: `case 1 ("api_token > 3"): parameter api_token is "${MASK}", not a number at character 1`,
        },
      ],
    });
    // A long one is quoted cut to 40 characters: that is masked too.
    const long = renderTask(
      task({
        type: "SWITCH",
        cases: [{ condition: "api_token > 3", next: "a" }],
        defaultNext: "b",
      }),
      { api_token: `${"k".repeat(45)}"q` },
      PARIS,
    );
    expect(JSON.stringify(long)).not.toContain("kkkk");
    expect(long.rendered).toMatchObject({
      cases: [
        { value: expect.stringContaining(`parameter api_token is "${MASK}…", not a number`) },
      ],
    });
  });

  it("LAMBDA and STEP_FUNCTIONS: the JSON documents they would send", () => {
    const lambda = renderTask(
      task({
        type: "LAMBDA",
        functionName: "fn",
        qualifier: "live",
        payload: '{"day": "$[yyyyMMdd]", "n": ${n}}',
      }),
      { n: "3" },
      PARIS,
    );
    expect(lambda.rendered).toEqual({
      type: "LAMBDA",
      functionName: "fn",
      qualifier: "live",
      payload: '{"day": "20261102", "n": 3}',
    });
    expect(renderingLines(lambda)).toContain("invoke: fn (qualifier live)");
    const sfn = renderTask(
      task({
        type: "STEP_FUNCTIONS",
        stateMachineArn: "arn:aws:states:eu-west-1:123456789012:stateMachine:m",
        input: '{"d": "${system.biz.date}"}',
        executionName: "run-$[yyyyMMdd]",
      }),
      { "system.biz.date": "20261101" },
      PARIS,
    );
    expect(sfn.rendered).toMatchObject({
      input: '{"d": "20261101"}',
      executionName: "run-20261102",
    });
    // Where the calls go: the ARN's region, whatever the worker's AWS_REGION.
    expect(renderingLines(sfn)).toContain(
      "calls Step Functions in eu-west-1, account 123456789012 (from the ARN)",
    );
    expect(renderingLines(lambda)).toContain("calls Lambda in the worker's region (AWS_REGION)");
  });

  it("a task that cannot be rendered carries the error a run would fail with", () => {
    const broken = renderTask(task({ type: "SHELL", command: "echo $[yyyyQQ]" }), {}, PARIS);
    expect(broken.error).toMatch(/time expression \$\[yyyyQQ\] is not valid/);
    expect(broken.rendered).toBeUndefined();
    expect(renderingLines(broken).at(-1)).toMatch(/^error: time expression/);
    expect(dryRunOutcome(broken)).toEqual({ state: "FAILURE", error: broken.error });
    // With a reference a dry run cannot resolve, the dry run goes on with a warning.
    const outDependent = renderTask(
      task({ type: "LAMBDA", functionName: "fn", payload: '{"rows": ${rows}}' }),
      {},
      PARIS,
    );
    expect(outDependent.error).toContain("the payload after parameter substitution is not JSON");
    expect(dryRunOutcome(outDependent)).toEqual({
      state: "SUCCESS",
      warning: expect.stringContaining("while ${rows} is not set"),
    });
    expect(dryRunOutcome(renderTask(task({ type: "SHELL", command: "true" }), {}, PARIS))).toEqual({
      state: "SUCCESS",
    });
  });
});

describe("renderTask: logic tasks, what they would decide", () => {
  it("SWITCH: each case's value with these parameters", () => {
    const r = renderTask(
      task({
        type: "SWITCH",
        cases: [
          { condition: "rows > threshold", next: "a" },
          { condition: "region > 3", next: "b" },
        ],
        defaultNext: "b",
      }),
      { rows: "5", threshold: "100", region: "eu" },
      PARIS,
    );
    expect(r.rendered).toEqual({
      type: "SWITCH",
      cases: [
        { condition: "rows > threshold", next: "a", value: false },
        {
          condition: "region > 3",
          next: "b",
          value: 'case 1 ("region > 3"): parameter region is "eu", not a number at character 1',
        },
      ],
      defaultNext: "b",
    });
    expect(renderingLines(r).slice(-4)).toEqual([
      "cases:",
      "  0: rows > threshold -> a: false",
      '  1: region > 3 -> b: case 1 ("region > 3"): parameter region is "eu", not a number at character 1',
      "  default -> b",
    ]);
  });

  it("DEPENDENT: the periods its items name, in the run's zone", () => {
    const r = renderTask(
      task({
        type: "DEPENDENT",
        dependence: {
          relation: "AND",
          groups: [
            { relation: "AND", items: [{ workflow: "w", cycle: "day", dateValue: "last1Days" }] },
          ],
        },
      }),
      {},
      PARIS,
    );
    expect(r.rendered).toEqual({
      type: "DEPENDENT",
      relation: "AND",
      items: [
        {
          workflow: "w",
          cycle: "day",
          dateValue: "last1Days",
          periods: [{ from: "2026-11-01T00:00:00.000+01:00", to: "2026-11-02T00:00:00.000+01:00" }],
        },
      ],
    });
    expect(renderingLines(r)).toContain(
      "  w day last1Days: 2026-11-01T00:00:00.000+01:00 .. 2026-11-02T00:00:00.000+01:00",
    );
  });
});

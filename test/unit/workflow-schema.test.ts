// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${x} in plain strings is Shoal's parameter syntax
/**
 * The JSON Schema of a workflow file (schemas/workflow.json): current with the validators it is
 * generated from, accepted by a draft 2020-12 validator in strict mode, met by every example
 * (each of which also passes the API's own validators), refusing what the API refuses, with a
 * description on every field; and served by `GET /v1/schemas/workflow.json`.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { ApiDeps } from "../../lib/api/deps.js";
import { handleApiRequest } from "../../lib/api/router.js";
import { workflowFileSchema } from "../../lib/api/schemas/workflow-file.js";
import { TASK_TYPES } from "../../lib/core/model.js";
import { NAME_PATTERN, parseWorkflowDefinition } from "../../lib/core/validate.js";
import {
  releaseLine,
  WORKFLOW_SCHEMA_FILE,
  workflowSchemaUrl,
  YAML_SCHEMA_COMMENT,
} from "../../lib/workflow-schema-url.js";
import pkg from "../../package.json" with { type: "json" };
import {
  exampleFiles,
  withModeline,
  workflowSchemaText,
} from "../../scripts/write-workflow-schema.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const schema = workflowFileSchema(pkg.version);

function compile(): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default(ajv);
  // yaml-language-server's completion snippets: not a validation keyword.
  ajv.addKeyword("defaultSnippets");
  return ajv.compile(schema);
}
const validate = compile();

/** ajv's complaints as `instancePath keyword`, for messages. */
const complaints = (v: ValidateFunction) =>
  (v.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");

/** The API's verdict on a document: undefined when `PUT /v1/workflows/{name}` takes it. */
function apiProblem(doc: Record<string, unknown>): string | undefined {
  const { name, version: _v, createdAt: _c, ...body } = doc;
  if (typeof name === "string" && !NAME_PATTERN.test(name)) return "name";
  try {
    parseWorkflowDefinition(body);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe("schemas/workflow.json", () => {
  it("is current (run `npm run openapi` after changing the validators)", () => {
    const committed = readFileSync(`${ROOT}${WORKFLOW_SCHEMA_FILE}`, "utf8");
    expect(committed).toBe(workflowSchemaText(pkg.version));
  });

  it("is a draft 2020-12 schema named by its published address", () => {
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.$id).toBe(workflowSchemaUrl(pkg.version));
    expect(workflowSchemaUrl("1.24.3")).toBe(
      "https://cdn.jsdelivr.net/npm/shoal@1.24/schemas/workflow.json",
    );
    expect(releaseLine("0.1.0-beta.2")).toBe("0.1");
  });

  it("describes every field, for editors' hover", () => {
    const missing: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (Array.isArray(node)) {
        for (const [i, n] of node.entries()) walk(n, `${path}[${i}]`);
        return;
      }
      if (!node || typeof node !== "object") return;
      const o = node as Record<string, unknown>;
      for (const [key, sub] of Object.entries((o.properties ?? {}) as Record<string, unknown>)) {
        const s = sub as Record<string, unknown>;
        // `if` and `then` clauses narrow a property described where it is declared.
        if (!/\.(if|then)$/.test(path) && typeof s.description !== "string") {
          missing.push(`${path}.${key}`);
        }
      }
      for (const [key, sub] of Object.entries(o)) walk(sub, `${path}.${key}`);
    };
    walk(schema, "");
    expect(missing).toEqual([]);
  });

  it("reads alike in draft-07, which older yaml-language-server versions apply", () => {
    const text = JSON.stringify(schema);
    for (const keyword of [
      "prefixItems",
      "unevaluatedProperties",
      "unevaluatedItems",
      "$dynamicRef",
      "dependentRequired",
      "dependentSchemas",
    ]) {
      expect(text, keyword).not.toContain(`"${keyword}"`);
    }
    expect(text).not.toContain('"items":false');
  });

  it("has one definition per task type, each closed to unknown fields", () => {
    const defs = schema.$defs as Record<string, Record<string, unknown>>;
    const titles = Object.values(defs).map((d) => d.title);
    for (const t of TASK_TYPES) {
      expect(titles).toContain(`${t} task`);
    }
    for (const [name, d] of Object.entries(defs)) {
      if (name !== "Task") expect(d.additionalProperties, name).toBe(false);
    }
    expect(schema.additionalProperties).toBe(false);
  });
});

describe("examples", () => {
  const files = exampleFiles(ROOT);

  it("are found", () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  for (const file of files) {
    const short = file.slice(ROOT.length);
    it(`${short} names the schema on its first lines, and every document meets it and the API's rules`, () => {
      const text = readFileSync(file, "utf8");
      expect(text.startsWith(`${YAML_SCHEMA_COMMENT}\n`)).toBe(true);
      // yaml-language-server reads a document's own top comments: each document repeats them.
      const repeated = text.split(`${YAML_SCHEMA_COMMENT}\n`).length - 1;
      expect(withModeline(text, pkg.version)).toBe(text);
      const docs = parseAllDocuments(text);
      expect(Array.isArray(docs) && docs.length > 0).toBe(true);
      expect(repeated, "the schema comment at the top of each document").toBe(
        Array.isArray(docs) ? docs.length : 0,
      );
      for (const [i, d] of (Array.isArray(docs) ? docs : []).entries()) {
        expect(d.errors, `${short} document ${i + 1}`).toEqual([]);
        const value = d.toJS() as Record<string, unknown>;
        expect(validate(value), `${short} document ${i + 1}: ${complaints(validate)}`).toBe(true);
        expect(apiProblem(value), `${short} document ${i + 1}`).toBeUndefined();
      }
    });
  }
});

describe("what the API refuses, the schema refuses", () => {
  const task = { code: "a", type: "SHELL", command: "echo a" };
  const bad: Array<[string, Record<string, unknown>]> = [
    ["an unknown workflow field", { name: "w", colour: "red", tasks: [task] }],
    ["an unknown task field", { name: "w", tasks: [{ ...task, colour: "red" }] }],
    ["a field of another task type", { name: "w", tasks: [{ ...task, url: "http://x/" }] }],
    ["a bad priority", { name: "w", priority: "URGENT", tasks: [task] }],
    ["a bad failure strategy", { name: "w", failureStrategy: "STOP", tasks: [task] }],
    ["an unknown task type", { name: "w", tasks: [{ ...task, type: "SQL" }] }],
    ["a SHELL task without a command", { name: "w", tasks: [{ code: "a", type: "SHELL" }] }],
    ["a blank command", { name: "w", tasks: [{ ...task, command: "  " }] }],
    ["a bad task code", { name: "w", tasks: [{ ...task, code: "-a" }] }],
    ["a bad workflow name", { name: "a b", tasks: [task] }],
    ["no tasks", { name: "w", tasks: [] }],
    ["a number as a parameter value", { name: "w", params: { n: 1 }, tasks: [task] }],
    ["a bad parameter name", { name: "w", params: { "1x": "1" }, tasks: [task] }],
    ["retries out of range", { name: "w", tasks: [{ ...task, retries: 101 }] }],
    [
      "an alert on an unknown event",
      { name: "w", alerts: [{ on: ["FAIL"], channels: ["ops"] }], tasks: [task] },
    ],
    [
      "an alert on the same event twice",
      { name: "w", alerts: [{ on: ["FAILURE", "FAILURE"], channels: ["ops"] }], tasks: [task] },
    ],
    ["a non-HTTP URL", { name: "w", tasks: [{ code: "h", type: "HTTP", url: "ftp://x/" }] }],
    [
      "a date value of another cycle",
      {
        name: "w",
        tasks: [
          {
            code: "d",
            type: "DEPENDENT",
            dependence: {
              groups: [{ items: [{ workflow: "x", cycle: "hour", dateValue: "today" }] }],
            },
          },
        ],
      },
    ],
  ];
  for (const [what, doc] of bad) {
    it(`${what}`, () => {
      expect(apiProblem(doc), "the API refuses it").toBeDefined();
      expect(validate(doc), "the schema refuses it").toBe(false);
    });
  }

  it("while taking a definition of every task type the API takes", () => {
    const doc = {
      name: "every-type",
      version: 3,
      createdAt: "2026-01-01T00:00:00.000Z",
      tasks: [
        { code: "s", type: "SHELL", command: "echo ${x}", params: { x: "1" } },
        { code: "h", type: "HTTP", url: "https://example.com/", upstream: ["s"] },
        { code: "l", type: "LAMBDA", functionName: "f", payload: "{}" },
        {
          code: "sf",
          type: "STEP_FUNCTIONS",
          stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:m",
        },
        { code: "c", type: "CONDITIONS", upstream: ["h"], successNext: ["ok"], failedNext: [] },
        { code: "ok", type: "SHELL", command: "true", upstream: ["c"] },
        { code: "sw", type: "SWITCH", cases: [{ condition: "x == '1'", next: "n" }] },
        { code: "n", type: "SHELL", command: "true", upstream: ["sw"] },
        { code: "sub", type: "SUB_WORKFLOW", workflow: "child" },
        {
          code: "d",
          type: "DEPENDENT",
          dependence: {
            relation: "OR",
            groups: [{ items: [{ workflow: "x", cycle: "day", dateValue: "last1Days" }] }],
          },
        },
      ],
    };
    expect(apiProblem(doc)).toBeUndefined();
    expect(validate(doc), complaints(validate)).toBe(true);
  });
});

describe("GET /v1/schemas/workflow.json", () => {
  /** No store, queue or clock: the route reads none of them. */
  const deps = {} as ApiDeps;
  const event = (headers: Record<string, string> = {}) =>
    ({
      rawPath: "/v1/schemas/workflow.json",
      headers,
      requestContext: { http: { method: "GET" } },
    }) as unknown as APIGatewayProxyEventV2;

  it("answers the schema, cacheable, and 304 for the ETag it gave", async () => {
    const r = await handleApiRequest(deps, event());
    expect(r.statusCode).toBe(200);
    expect(r.headers?.["content-type"]).toBe("application/json");
    expect(r.headers?.["cache-control"]).toMatch(/^public, max-age=\d+$/);
    expect(JSON.parse(r.body as string)).toEqual(workflowFileSchema());
    const etag = String(r.headers?.etag);
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await handleApiRequest(deps, event({ "If-None-Match": `W/${etag}` }));
    expect(again.statusCode).toBe(304);
    expect(again.body).toBeUndefined();
    const other = await handleApiRequest(deps, event({ "if-none-match": '"old"' }));
    expect(other.statusCode).toBe(200);
  });
});

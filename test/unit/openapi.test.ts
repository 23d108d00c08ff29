import { readFileSync } from "node:fs";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { describe, expect, it } from "vitest";
import type { ApiDeps } from "../../lib/api/deps.js";
import { openApiDocument } from "../../lib/api/openapi.js";
import { pathParamNames } from "../../lib/api/route.js";
import { apiRouter, handleApiRequest } from "../../lib/api/router.js";
import { apiDocument, ROUTES } from "../../lib/api/routes.js";
import pkg from "../../package.json" with { type: "json" };
import { API_TYPES_FILE, apiTypesSource } from "../../scripts/api-types-source.js";
import { answerChecker } from "../helpers/answer-schemas.js";

type Operation = {
  operationId: string;
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, unknown>;
};

describe("OpenAPI document", () => {
  const doc = apiDocument(pkg.version) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, unknown> };
  };

  it("docs/openapi.json is current (run `npm run openapi` after changing the API)", () => {
    const committed = JSON.parse(
      readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"),
    );
    expect(committed).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it(`${API_TYPES_FILE} is current (run \`npm run openapi\` after changing the API)`, async () => {
    const committed = readFileSync(new URL(`../../${API_TYPES_FILE}`, import.meta.url), "utf8");
    expect(committed).toBe(await apiTypesSource(JSON.parse(JSON.stringify(doc))));
  }, 60_000);

  it("describes every route of the table, and nothing else", () => {
    const described = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(
        ([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`,
      ),
    );
    const table = ROUTES.map((r) => `${r.method} ${r.path} ${r.operationId}`);
    expect(described.sort()).toEqual([...table].sort());
    expect(new Set(ROUTES.map((r) => r.operationId)).size).toBe(ROUTES.length);
  });

  it("declares each path parameter of each template", () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops)) {
        const declared = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
        expect(declared, path).toEqual(pathParamNames(path));
      }
    }
  });

  it("declares the answers every route can give: 404 with a path parameter, 400/413/415 with a body", () => {
    const missing = ROUTES.flatMap((r) => {
      const declared = Object.keys(r.responses);
      const needed = [
        // The router answers 404 for a parameter that does not URI-decode.
        ...(r.path.includes("{") ? ["404"] : []),
        // Reading a body (http.ts parseBody): not JSON, too large, another content type.
        ...(r.body ? ["400", "413", "415"] : []),
      ];
      return needed.filter((s) => !declared.includes(s)).map((s) => `${r.method} ${r.path} ${s}`);
    });
    expect(missing).toEqual([]);
  });

  it("refuses a table with a route twice", () => {
    const twice = [...ROUTES, ROUTES[0] as (typeof ROUTES)[number]];
    expect(() => openApiDocument("x", twice)).toThrow(/twice/);
  });

  it("resolves every $ref to a component schema", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(50);
    const missing = refs.filter(
      (r) => !(r?.startsWith("#/components/schemas/") && r.slice(21) in doc.components.schemas),
    );
    expect(missing).toEqual([]);
  });

  it("names the error body component Error; only the generated TypeScript type is ErrorBody", () => {
    expect(doc.components.schemas).toHaveProperty("Error");
    expect(doc.components.schemas).not.toHaveProperty("ErrorBody");
    const types = readFileSync(new URL(`../../${API_TYPES_FILE}`, import.meta.url), "utf8");
    expect(types).toContain("export interface ErrorBody {");
    expect(types).toContain("Error?: ErrorBody;");
  });

  it("takes its request schemas from the validators (unknown fields refused, defaults shown)", () => {
    const def = doc.components.schemas.WorkflowDefinition as {
      additionalProperties: unknown;
      properties: Record<string, { default?: unknown }>;
    };
    expect(def.additionalProperties).toBe(false);
    expect(def.properties.failureStrategy?.default).toBe("END");
  });
});

describe("route table", () => {
  /** Whether two templates can match one path: same length, and each segment equal or a parameter. */
  const overlap = (a: string, b: string) => {
    const [x, y] = [a.split("/"), b.split("/")];
    const param = (s: string) => /^\{[^}]+\}$/.test(s);
    return x.length === y.length && x.every((s, i) => s === y[i] || param(s) || param(y[i] ?? ""));
  };

  it("has no two templates that match one path (the router's order does not matter)", () => {
    const paths = [...new Set(ROUTES.map((r) => r.path))];
    const clashes = paths.flatMap((a, i) =>
      paths.slice(i + 1).flatMap((b) => (overlap(a, b) ? [`${a} ~ ${b}`] : [])),
    );
    expect(clashes).toEqual([]);
  });

  it("routes each of its templates, with the path parameters decoded, to its handler", async () => {
    for (const r of ROUTES) {
      let seen: Record<string, string> | undefined;
      // The table with this route's handler swapped for one that records its parameters.
      const router = apiRouter(
        ROUTES.map((x) =>
          x === r
            ? {
                ...x,
                handler: async (_d: ApiDeps, p: Readonly<Record<string, string>>) => {
                  seen = { ...p };
                  return { statusCode: 299 };
                },
              }
            : x,
        ),
      );
      const names = pathParamNames(r.path);
      const rawPath = r.path.replace(/\{([^}]+)\}/g, (_m, n: string) => `${n}%20${n}`);
      const res = await router({ now: () => 0 } as unknown as ApiDeps, event(r.method, rawPath));
      expect(res.statusCode, `${r.method} ${r.path}`).toBe(299);
      expect(seen).toEqual(Object.fromEntries(names.map((n) => [n, `${n} ${n}`])));
    }
  });

  it("answers 404 for an unknown path and for a known path with another method", async () => {
    const deps = { now: () => 0 } as unknown as ApiDeps;
    const call = async (method: string, rawPath: string) => {
      const res = await handleApiRequest(deps, event(method, rawPath));
      return [res.statusCode, JSON.parse(String(res.body)).error.message];
    };
    expect(await call("GET", "/v1/nothing")).toEqual([404, "no endpoint GET /v1/nothing"]);
    expect(await call("PATCH", "/v1/workflows/x/")).toEqual([
      404,
      "PATCH is not supported on /v1/workflows/x",
    ]);
    expect(await call("GET", "/v1/instances/%E0%A4%A")).toEqual([
      404,
      "no resource at /v1/instances/%E0%A4%A",
    ]);
  });
});

describe("answer checker of the integration tests (test/helpers/answer-schemas.ts)", () => {
  const check = answerChecker();
  const answer = (statusCode: number, body?: unknown) => ({
    statusCode,
    headers: { "content-type": "application/json" },
    body: body === undefined ? "" : JSON.stringify(body),
  });
  const notFound = { error: { code: "NotFound", message: "no" } };

  it("accepts an answer the document describes", () => {
    expect(check(event("GET", "/v1/health"), answer(200, { status: "ok", version: "1" }))).toBe(
      undefined,
    );
    expect(check(event("GET", "/v1/nothing"), answer(404, notFound))).toBe(undefined);
    expect(check(event("DELETE", "/v1/triggers/t1"), { statusCode: 204 })).toBe(undefined);
  });

  it("refuses a status the route does not declare, naming the route", () => {
    const problem = check(event("GET", "/v1/health"), answer(500, notFound));
    expect(problem).toMatch(/GET \/v1\/health .*status 500: the route declares no such status/);
    expect(check(event("PATCH", "/v1/health"), answer(200, {}))).toMatch(/no route/);
  });

  it("refuses a body its schema refuses, a field it does not name, and a body it does not declare", () => {
    const path = "/v1/instances/i1/tasks/a/explain";
    const explanation = { code: "a", state: "RUNNING", reason: "RUNNING", message: "m", facts: {} };
    expect(check(event("GET", path), answer(200, explanation))).toBe(undefined);
    expect(check(event("GET", path), answer(200, { ...explanation, state: 3 }))).toMatch(
      /\/state must be equal to one of the allowed values/,
    );
    expect(check(event("GET", path), answer(200, { ...explanation, extra: 1 }))).toMatch(
      /unevaluatedProperty":"extra"/,
    );
    expect(check(event("DELETE", "/v1/triggers/t1"), answer(204, {}))).toMatch(/declares no body/);
  });
});

/** A request event of API Gateway's payload 2.0, as the router reads it. */
function event(method: string, rawPath: string): APIGatewayProxyEventV2 {
  return {
    rawPath,
    requestContext: { http: { method } },
    headers: {},
  } as unknown as APIGatewayProxyEventV2;
}

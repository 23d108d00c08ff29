/**
 * The fuzzer's cases, generated from the OpenAPI document: for every path of the document, its
 * declared operations with valid bodies and parameters, bodies broken in one field, garbage
 * bodies, hostile path and query values, wrong content types, deep nesting in a field, and
 * methods the path does not declare. Each case is one HTTP request plus what the properties
 * need to judge its answer (which field a broken body broke, the body's schema).
 */
import fc from "fast-check";
import {
  type Components,
  coherentDefinition,
  deeplyNested,
  garbageArb,
  hostileString,
  mutationArb,
  resolve,
  type Schema,
  schemaArb,
} from "./arbitraries.js";
import {
  BACKFILL_BODY,
  BASE_DEFINITION,
  type Fixtures,
  SCHEDULE_BODY,
  SCRATCH_GROUPS,
  SCRATCH_WORKFLOWS,
} from "./fixtures.js";
import type { FuzzRequest } from "./harness.js";
import { percentEncode, target } from "./request-target.js";

/** What kind of request a case is (the properties judge some kinds more strictly). */
export type CaseKind =
  | "valid"
  | "schema-generated"
  | "one-field-broken"
  | "garbage-body"
  | "hostile-parameter"
  | "wrong-content-type"
  | "deep-field"
  | "undeclared-method";

/** One generated request and what it is. */
export interface FuzzCase {
  kind: CaseKind;
  /** `METHOD /template` of the operation (or the path's, for an undeclared method). */
  operation: string;
  request: FuzzRequest;
  /** What was done to it, for the failure message. */
  note: string;
  /** The field a one-field-broken body broke: a 400 must name it. */
  brokenField?: string;
  /** The body as a value and its schema: a 2xx for a body the schema refuses is a violation. */
  body?: { value: unknown; schema: Schema };
}

interface Operation {
  method: string;
  template: string;
  query: Array<{ name: string; schema: Schema }>;
  /** The JSON body's schema: declared, or `{}`-only for a verb that reads one (413/415). */
  bodySchema?: Schema;
  yaml: boolean;
}

interface Document {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { schemas: Components };
}

/** The operations of the document. */
function operationsOf(doc: Document): Operation[] {
  const out: Operation[] = [];
  for (const [template, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters ?? []) as Array<{ name: string; in: string; schema: Schema }>;
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> })?.content;
      const responses = op.responses as Record<string, unknown>;
      const verb = !content && "415" in responses;
      const bodySchema =
        content?.["application/json"]?.schema ??
        (verb ? { type: "object", additionalProperties: false } : undefined);
      out.push({
        method: method.toUpperCase(),
        template,
        query: params.filter((p) => p.in === "query"),
        ...(bodySchema ? { bodySchema } : {}),
        yaml: Boolean(content?.["application/yaml"]),
      });
    }
  }
  return out;
}

/** The known-good body of each operation that reads one (fixtures.ts), by `METHOD template`. */
function goodBody(op: Operation): Record<string, unknown> | undefined {
  switch (`${op.method} ${op.template}`) {
    case "PUT /v1/workflows/{name}":
      return BASE_DEFINITION;
    case "POST /v1/workflows/{name}/release":
      return { state: "ONLINE" };
    case "POST /v1/workflows/{name}/runs":
      return { params: { day: "2024-01-01" }, priority: "LOW" };
    case "POST /v1/workflows/{name}/tasks/{code}/render":
      return { params: { day: "2024-01-01" }, scheduleTime: "2024-01-01T00:00:00Z" };
    case "POST /v1/schedules":
    case "PUT /v1/schedules/{id}":
      return SCHEDULE_BODY;
    case "POST /v1/workflows/{name}/backfill":
      return BACKFILL_BODY;
    case "POST /v1/triggers":
      return { workflow: "base", eventPattern: { source: ["fz.never"] } };
    case "POST /v1/events":
      return { Entries: [{ Source: "fz.source", DetailType: "fz", Detail: '{"k":1}' }] };
    case "PUT /v1/task-groups/{name}":
      return { capacity: 3, description: "fuzz" };
    default:
      return op.bodySchema ? {} : undefined;
  }
}

/** Path parameter values a valid request uses (fixtures, or scratch names it may write). */
function goodParam(op: Operation, name: string, f: Fixtures): fc.Arbitrary<string> {
  const writes = op.method !== "GET";
  if (name === "code") return fc.constantFrom("extract", "load");
  if (name === "name" && op.template.startsWith("/v1/task-groups")) {
    return op.method === "DELETE" || op.method === "PUT"
      ? fc.constantFrom(...SCRATCH_GROUPS)
      : fc.constantFrom("fz-group", ...SCRATCH_GROUPS);
  }
  if (name === "name") {
    if (op.method === "DELETE" || op.method === "PUT") return fc.constantFrom(...SCRATCH_WORKFLOWS);
    return writes && op.template.endsWith("/release")
      ? fc.constantFrom(...SCRATCH_WORKFLOWS)
      : fc.constantFrom("base", "base", ...SCRATCH_WORKFLOWS);
  }
  const prefix = op.template.split("/")[2];
  // Deleting a fixture would leave the rest of the run with 404s only: valid deletes miss.
  if (op.method === "DELETE")
    return fc.constantFrom("ghost-id", "00000000-0000-0000-0000-000000000000");
  const id =
    prefix === "instances"
      ? f.instanceId
      : prefix === "schedules"
        ? f.scheduleId
        : prefix === "backfills"
          ? f.backfillId
          : f.triggerId;
  return fc.constantFrom(id, id, "ghost-id");
}

/** A query string from the operation's declared parameters (valid values, some left out). */
function queryArb(op: Operation, components: Components): fc.Arbitrary<Record<string, string>> {
  if (op.query.length === 0) return fc.constant({});
  return fc.record(
    Object.fromEntries(
      op.query.map((q) => [q.name, schemaArb(q.schema, components).map((v) => String(v))]),
    ),
    { requiredKeys: [] },
  ) as fc.Arbitrary<Record<string, string>>;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** Every kind of case for one operation of the document. */
function operationCases(
  op: Operation,
  components: Components,
  f: Fixtures,
): fc.Arbitrary<FuzzCase> {
  const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const params = fc.record(
    Object.fromEntries(names.map((n) => [n, goodParam(op, n, f)])),
  ) as fc.Arbitrary<Record<string, string>>;
  const query = queryArb(op, components);
  const operation = `${op.method} ${op.template}`;
  const good = goodBody(op);
  const jsonHeaders = { "content-type": "application/json" };
  const req = (
    p: Record<string, string>,
    q: Record<string, string>,
    body?: Buffer,
    headers: Record<string, string> = jsonHeaders,
  ): FuzzRequest => ({
    method: op.method,
    path: target(op.template, p, q),
    headers: body ? headers : {},
    ...(body ? { body } : {}),
  });
  const cases: Array<{ weight: number; arbitrary: fc.Arbitrary<FuzzCase> }> = [];
  const schema = op.bodySchema;

  cases.push({
    weight: 3,
    arbitrary: fc.tuple(params, query).map(([p, q]) => ({
      kind: "valid" as const,
      operation,
      request: req(p, q, good ? json(good) : undefined),
      note: "known-good body and parameters",
      ...(good && schema ? { body: { value: good, schema } } : {}),
    })),
  });
  // Hostile value in one path or query parameter, the rest valid.
  const slots = [
    ...names.map((n) => `path:${n}`),
    ...op.query.map((q) => `query:${q.name}`),
    "query:zzUnknown",
  ];
  cases.push({
    weight: 3,
    arbitrary: fc
      .tuple(params, query, fc.constantFrom(...slots), hostileString, fc.boolean())
      .map(([p, q, slot, value, raw]) => {
        const [where, name] = slot.split(":") as [string, string];
        const hostile = value.length > 8192 ? value.slice(0, 8192) : value;
        // Raw: the value's own `/`, `%` and `..` reach the router (only what the client must escape is).
        const rawValue = hostile
          .replace(/[^\u0021-\u007e]/g, (ch) => percentEncode(ch))
          .replace(/[?#]/g, (ch) => percentEncode(ch));
        const path =
          where === "path"
            ? target(op.template, { ...p, [name]: raw ? rawValue : hostile }, q, { [name]: raw })
            : target(op.template, p, { ...q, [name]: hostile });
        return {
          kind: "hostile-parameter" as const,
          operation,
          request: { ...req(p, q, good ? json(good) : undefined), path },
          note: `${slot} = ${JSON.stringify(hostile.slice(0, 80))}${hostile.length > 80 ? `… (${hostile.length})` : ""}${raw ? " (unescaped)" : ""}`,
        };
      }),
  });
  if (schema) {
    const generated =
      operation === "PUT /v1/workflows/{name}"
        ? schemaArb(schema, components).map(coherentDefinition)
        : schemaArb(schema, components);
    cases.push({
      weight: 3,
      arbitrary: fc.tuple(params, generated).map(([p, value]) => ({
        kind: "schema-generated" as const,
        operation,
        request: req(p, {}, json(value)),
        note: "a body generated from the request schema",
        body: { value, schema },
      })),
    });
    const base = good ?? {};
    const s = resolve(schema, components);
    if (
      s.type === "object" &&
      (Object.keys((s.properties ?? {}) as object).length || s.additionalProperties === false)
    ) {
      cases.push({
        weight: 5,
        arbitrary: fc.tuple(params, mutationArb(base, schema, components)).map(([p, m]) => ({
          kind: "one-field-broken" as const,
          operation,
          request: req(p, {}, json(m.body)),
          note: `${m.what} at '${m.path}'`,
          brokenField: m.path,
          body: { value: m.body, schema },
        })),
      });
    }
    cases.push({
      weight: 2,
      arbitrary: fc.tuple(params, garbageArb, fc.boolean()).map(([p, g, yaml]) => {
        // The YAML parser gets garbage too where the route takes YAML.
        const type = op.yaml && yaml ? "application/yaml" : "application/json";
        return {
          kind: "garbage-body" as const,
          operation,
          request: req(p, {}, Buffer.from(g.text, "latin1"), { "content-type": type }),
          note: `${g.what} body (${g.text.length} bytes) as ${type}`,
        };
      }),
    });
    const types = [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/xml",
      "application/json; charset=utf-16",
      "application/vnd.shoal+json",
      "APPLICATION/JSON",
      "application/yaml",
      "text/yaml",
      "",
      "*/*",
      "application/jsonx",
    ];
    cases.push({
      weight: 2,
      arbitrary: fc
        .tuple(params, fc.option(fc.constantFrom(...types), { nil: undefined }), fc.boolean())
        .map(([p, type, yaml]) => {
          const text = yaml
            ? "tasks:\n  - {code: a, type: SHELL, command: echo}\n"
            : JSON.stringify(base);
          return {
            kind: "wrong-content-type" as const,
            operation,
            request: req(
              p,
              {},
              Buffer.from(text),
              type === undefined ? {} : { "content-type": type },
            ),
            note: `content-type ${type === undefined ? "(none)" : JSON.stringify(type)} with a ${yaml ? "YAML" : "JSON"} body`,
          };
        }),
    });
    // Where the nesting goes: a field of the body, or of the first element of a list it holds
    // (tasks[0].payload, Entries[0].Detail).
    const fields: Array<[string, string?]> = Object.keys((s.properties ?? {}) as object).map(
      (f): [string, string?] => [f],
    );
    for (const [key, value] of Object.entries(base)) {
      const first = Array.isArray(value) ? (value[0] as Record<string, unknown>) : undefined;
      if (!first || typeof first !== "object") continue;
      for (const sub of new Set([...Object.keys(first), "payload", "input", "body", "params"])) {
        fields.push([key, sub]);
      }
    }
    if (fields.length) {
      cases.push({
        weight: 1,
        arbitrary: fc
          .tuple(
            params,
            fc.constantFrom(...fields),
            fc.constantFrom("array", "object", "string"),
            fc.constantFrom(33, 10_000),
          )
          .map(([p, [field, sub], kind, levels]) => {
            const deep =
              kind === "string"
                ? JSON.stringify(deeplyNested(levels, "object"))
                : deeplyNested(levels, kind);
            const holder = base as Record<string, Array<Record<string, unknown>>>;
            const value =
              sub === undefined
                ? { ...base, [field]: "__DEEP__" }
                : { ...base, [field]: [{ ...holder[field]?.[0], [sub]: "__DEEP__" }] };
            const text = JSON.stringify(value).replace('"__DEEP__"', deep);
            return {
              kind: "deep-field" as const,
              operation,
              request: req(p, {}, Buffer.from(text)),
              note: `${levels} levels of ${kind === "string" ? "nesting, as a JSON string," : `${kind}s`} in '${sub === undefined ? field : `${field}[0].${sub}`}'`,
            };
          }),
      });
    }
  }
  return fc.oneof(...cases);
}

/** Requests with a method the path does not declare (and declared ones without their body). */
function methodCases(doc: Document, f: Fixtures): fc.Arbitrary<FuzzCase> {
  const paths = Object.keys(doc.paths);
  return fc
    .tuple(
      fc.constantFrom(...paths),
      fc.constantFrom("GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"),
      fc.boolean(),
    )
    .map(([template, method, withBody]): FuzzCase => {
      const path = template
        .replace("{name}", "base")
        .replace("{code}", "extract")
        .replace("{id}", template.startsWith("/v1/instances") ? f.instanceId : "ghost-id");
      const declared = method.toLowerCase() in (doc.paths[template] ?? {});
      const body = withBody && method !== "TRACE" ? json({ zz: 1 }) : undefined;
      return {
        kind: "undeclared-method" as const,
        operation: `${method} ${template}`,
        request: {
          method,
          path,
          headers: body ? { "content-type": "application/json" } : ({} as Record<string, string>),
          ...(body ? { body } : {}),
        },
        note: `${declared ? "declared" : "undeclared"} method${body ? " with a stray body" : ""}`,
      };
    });
}

/** All cases of the document: each operation equally likely, then the kinds by weight. */
export function caseArb(doc: Document, fixtures: Fixtures): fc.Arbitrary<FuzzCase> {
  const components = doc.components.schemas;
  const ops = operationsOf(doc).map((op) => operationCases(op, components, fixtures));
  return fc.oneof(
    { weight: ops.length, arbitrary: fc.oneof(...ops) },
    { weight: 6, arbitrary: methodCases(doc, fixtures) },
  );
}

/** The case as text for a failure message (bodies cut at 600 characters). */
export function describeCase(c: FuzzCase): string {
  const body = c.request.body?.toString("utf8") ?? "";
  const shown = body.length > 600 ? `${body.slice(0, 600)}… (${body.length} bytes)` : body;
  const path =
    c.request.path.length > 300
      ? `${c.request.path.slice(0, 300)}… (${c.request.path.length})`
      : c.request.path;
  return `${c.kind} ${c.operation}: ${c.note}\n  ${c.request.method} ${path}\n  headers ${JSON.stringify(c.request.headers)}\n  body ${shown ? JSON.stringify(shown) : "(none)"}`;
}

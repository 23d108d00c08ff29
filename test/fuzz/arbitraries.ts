/**
 * fast-check arbitraries built from the OpenAPI document's JSON Schemas (docs/openapi.json,
 * lib/api/routes.ts `apiDocument`): values a schema accepts, values that break it in one field
 * (wrong type, out of range, missing required, an extra property), hostile strings (NUL, lone
 * surrogates, bidi and zero-width characters, path traversal, 1 MB values) and garbage bodies
 * (random JSON, non-JSON, empty, 10,000 levels of nesting).
 */
import fc from "fast-check";

export type Schema = Record<string, unknown>;

/** The components of the document, to resolve `$ref`s. */
export type Components = Record<string, Schema>;

const REF = "#/components/schemas/";

/** `schema` with its `$ref` followed (once per level). */
export function resolve(schema: Schema, components: Components): Schema {
  const ref = schema.$ref;
  if (typeof ref === "string" && ref.startsWith(REF)) {
    return resolve(components[ref.slice(REF.length)] ?? {}, components);
  }
  return schema;
}

/** Strings no process can take, or that try to escape a path or fool a reader. */
export const HOSTILE_STRINGS: readonly string[] = [
  "",
  " ",
  "a\u0000b",
  "\u0000",
  "\ud800",
  "x\udc00y",
  "\u202eevil\u202c",
  "a\u200bb\u200d\ufeff",
  "\u0645\u0631\u062d\u0628\u0627",
  "../../etc/passwd",
  "..\\..\\windows",
  "%2e%2e%2f",
  "%00",
  "__proto__",
  "constructor",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a placeholder a shell or template might expand
  "${env:HOME}",
  "$(reboot)",
  "`id`",
  "'; DROP TABLE x; --",
  "\r\nX-Injected: 1",
  "null",
  "-1",
  "1e400",
  "\ud83d\ude00",
  "x".repeat(1025),
  "é".repeat(70_000),
];

/** One megabyte of text (the value generators put in a field). */
export const ONE_MB = "m".repeat(1024 * 1024);

/** A hostile string: a fixed one, random code units (lone surrogates included), or a mix. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      maxLength: 20,
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ maxLength: 8 }))
      .map(([h, s]) => `${s}${h}${s}`),
  },
  { weight: 1, arbitrary: fc.constant(ONE_MB) },
);

/** Any JSON value, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

const FAR = 1e6;

/** A string the schema accepts (pattern, length, format, enum). */
function stringArb(schema: Schema): fc.Arbitrary<string> {
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = Math.min(typeof schema.maxLength === "number" ? schema.maxLength : 24, 24);
  if (schema.format === "date-time") {
    return fc
      .date({ min: new Date("2000-01-01Z"), max: new Date("2035-12-31Z"), noInvalidDate: true })
      .map((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z"));
  }
  if (schema.format === "uri") return fc.webUrl();
  if (typeof schema.pattern === "string") {
    const re = new RegExp(schema.pattern);
    return fc
      .stringMatching(re)
      .filter((s) => s.length >= min && s.length <= (Number(schema.maxLength) || 10_000));
  }
  return fc.string({ minLength: min, maxLength: Math.max(min, max) });
}

/**
 * Values `schema` accepts (within reason: short strings and arrays, shallow open objects).
 * `depth` bounds recursion through open objects and arrays.
 */
export function schemaArb(
  schema: Schema | boolean,
  components: Components,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (typeof schema === "boolean") return anyJson;
  const s = resolve(schema, components);
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const alternatives = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (alternatives?.length) {
    return fc.oneof(
      ...alternatives.map((a) =>
        schemaArb({ ...s, oneOf: undefined, anyOf: undefined, ...a }, components, depth),
      ),
    );
  }
  const type = Array.isArray(s.type) ? (s.type[0] as string) : (s.type as string | undefined);
  switch (type) {
    case "string":
      return stringArb(s);
    case "integer":
      return fc.integer({
        min: typeof s.minimum === "number" ? Math.max(s.minimum, -FAR) : -FAR,
        max: typeof s.maximum === "number" ? Math.min(s.maximum, FAR) : FAR,
      });
    case "number":
      return fc.double({
        min: typeof s.minimum === "number" ? s.minimum : -FAR,
        max: typeof s.maximum === "number" ? s.maximum : FAR,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const min = typeof s.minItems === "number" ? s.minItems : 0;
      const max = Math.min(typeof s.maxItems === "number" ? s.maxItems : 3, min + 3);
      if (Array.isArray(s.prefixItems)) {
        return fc.tuple(
          ...(s.prefixItems as Schema[]).map((p) => schemaArb(p, components, depth + 1)),
        );
      }
      const items = (s.items as Schema | undefined) ?? {};
      if (depth > 3) return fc.constant([]);
      return fc.array(schemaArb(items, components, depth + 1), { minLength: min, maxLength: max });
    }
    case "object":
      return objectArb(s, components, depth);
    default:
      return depth > 2 ? fc.constant(null) : anyJson;
  }
}

function objectArb(s: Schema, components: Components, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = (s.required ?? []) as string[];
  const fixed =
    Object.keys(props).length > 0
      ? fc.record(
          Object.fromEntries(
            Object.entries(props).map(([k, v]) => [k, schemaArb(v, components, depth + 1)]),
          ),
          { requiredKeys: required.filter((k) => k in props) },
        )
      : fc.constant({});
  const extra = s.additionalProperties;
  if (extra === undefined || extra === false || depth > 3) return fixed;
  const names = (s.propertyNames as Schema | undefined) ?? { type: "string", maxLength: 12 };
  const values = extra === true ? anyJson : schemaArb(extra as Schema, components, depth + 1);
  return fc
    .tuple(fixed, fc.dictionary(stringArb(names), values, { maxKeys: 3 }))
    .map(([a, b]) => ({ ...b, ...(a as object) }));
}

/** One way to break a field: what it does, and the broken body. */
export interface Mutation {
  /** The field the mutation broke (`tasks[0].command`, `params.x`, `state`); `""`: the body. */
  path: string;
  what: string;
  body: unknown;
}

/** A value of another JSON type than `schema` wants. */
function wrongType(schema: Schema): fc.Arbitrary<unknown> {
  const type = schema.type;
  const all: Array<[string, unknown]> = [
    ["string", "not-a-number"],
    ["integer", 12.5],
    ["number", "12"],
    ["boolean", "true"],
    ["array", { not: "a list" }],
    ["object", ["not", "an", "object"]],
    ["null", null],
  ];
  const others = all.filter(([t]) => t !== type && !(type === "number" && t === "integer"));
  return fc.constantFrom(...others.map(([, v]) => v), 7, [], {});
}

/** A value just outside the schema's bounds (range, length, items, pattern, enum). */
function outOfRange(schema: Schema): fc.Arbitrary<unknown> | undefined {
  const options: unknown[] = [];
  if (typeof schema.minimum === "number") options.push(schema.minimum - 1);
  if (typeof schema.maximum === "number") options.push(schema.maximum + 1, 1e308);
  if (typeof schema.maxLength === "number") options.push("y".repeat(schema.maxLength + 1));
  if (typeof schema.minLength === "number" && schema.minLength > 0) options.push("");
  if (typeof schema.minItems === "number" && schema.minItems > 0) options.push([]);
  if (Array.isArray(schema.enum))
    options.push("NOT_A_CHOICE", String(schema.enum[0]).toLowerCase());
  if (typeof schema.pattern === "string") options.push("-bad pattern-", "a/b", "");
  return options.length ? fc.constantFrom(...options) : undefined;
}

/**
 * Bodies `base` (valid for `schema`, an object schema) broken in exactly one field: a property
 * of the schema given a wrong type, a value out of range or a hostile string; a required one
 * removed; an unknown one added (when the schema closes the object).
 */
export function mutationArb(
  base: Record<string, unknown>,
  schema: Schema,
  components: Components,
  prefix = "",
): fc.Arbitrary<Mutation> {
  const s = alternativeFor(resolve(schema, components), base, components);
  const at = (key: string) => `${prefix}${prefix ? "." : ""}${key}`;
  const props = Object.entries((s.properties ?? {}) as Record<string, Schema>).map(
    ([k, v]) => [k, resolve(v, components)] as const,
  );
  const required = ((s.required ?? []) as string[]).filter((k) => k in base);
  const choices: Array<fc.Arbitrary<Mutation>> = [];
  for (const [key, prop] of props) {
    const set = (what: string) => (value: unknown) => ({
      path: at(key),
      what,
      body: { ...base, [key]: value },
    });
    choices.push(wrongType(prop).map(set("wrong type")));
    const range = outOfRange(prop);
    if (range) choices.push(range.map(set("out of range")));
    if (prop.type === "string") choices.push(hostileString.map(set("hostile string")));
    if (prop.type === "object" && prop.additionalProperties) {
      // A map (params): a hostile value or a hostile name.
      choices.push(
        fc.tuple(fc.constantFrom("x", "a_b"), hostileString).map(([name, v]) => ({
          path: `${at(key)}.${name}`,
          what: "hostile map value",
          body: { ...base, [key]: { [name]: v } },
        })),
      );
    }
    // One level down: the first element of a list of objects the base holds (tasks[0], Entries[0]).
    const first = Array.isArray(base[key]) ? (base[key] as unknown[])[0] : undefined;
    if (prop.type === "array" && first && typeof first === "object" && prop.items) {
      choices.push(
        mutationArb(
          first as Record<string, unknown>,
          prop.items as Schema,
          components,
          `${at(key)}[0]`,
        ).map((m) => ({
          ...m,
          body: { ...base, [key]: [m.body, ...(base[key] as unknown[]).slice(1)] },
        })),
      );
    }
  }
  for (const key of required) {
    choices.push(
      fc.constant({
        path: at(key),
        what: "missing required",
        body: Object.fromEntries(Object.entries(base).filter(([k]) => k !== key)),
      }),
    );
  }
  if (s.additionalProperties === false) {
    choices.push(
      fc.constantFrom("zzUnknown", "Workflow", "__proto__x").map((key) => ({
        path: at(key),
        what: "extra property",
        body: { ...base, [key]: 1 },
      })),
    );
  }
  return fc.oneof(...choices);
}

/** The `oneOf` alternative whose `type` constant is the value's (a task's type), else `s`. */
function alternativeFor(s: Schema, value: Record<string, unknown>, components: Components): Schema {
  const alternatives = s.oneOf as Schema[] | undefined;
  if (!alternatives) return s;
  const resolved = alternatives.map((a) => resolve(a, components));
  return (
    resolved.find(
      (a) =>
        ((a.properties as Record<string, Schema> | undefined)?.type?.const ?? null) === value.type,
    ) ??
    resolved[0] ??
    s
  );
}

/**
 * A generated workflow definition made coherent: task codes unique (`t0`, `t1` …), each task
 * downstream of the one before, branch targets dropped, so that the schema's values reach the
 * checks past the graph's.
 */
export function coherentDefinition(value: unknown): unknown {
  const def = value as { tasks?: Array<Record<string, unknown>> };
  if (!Array.isArray(def?.tasks)) return value;
  const tasks = def.tasks.map((t, i) => {
    const { successNext, failedNext, defaultNext, upstream, ...rest } = t;
    void successNext;
    void failedNext;
    void defaultNext;
    void upstream;
    return { ...rest, code: `t${i}`, ...(i > 0 ? { upstream: [`t${i - 1}`] } : {}) };
  });
  return { ...def, tasks };
}

/** JSON text nested `levels` deep (arrays or objects), optionally around a value. */
export function deeplyNested(levels: number, kind: "array" | "object"): string {
  return kind === "array"
    ? `${"[".repeat(levels)}1${"]".repeat(levels)}`
    : `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** A garbage body: its bytes as sent, and what it is. */
export interface Garbage {
  what: string;
  text: string;
}

/** Bodies that are not what any endpoint wants: random JSON, non-JSON, empty, deep nesting. */
export const garbageArb: fc.Arbitrary<Garbage> = fc.oneof(
  anyJson.map((v) => ({ what: "random JSON", text: JSON.stringify(v) ?? "null" })),
  fc.string({ maxLength: 40 }).map((t) => ({ what: "random text", text: t })),
  fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((b) => ({ what: "random bytes", text: Buffer.from(b).toString("latin1") })),
  fc.constantFrom(
    { what: "empty", text: "" },
    { what: "whitespace", text: " \n\t " },
    { what: "truncated JSON", text: '{"tasks": [' },
    { what: "JSON with a NUL", text: '{"a":"\u0000"}' },
    { what: "duplicate keys", text: '{"state":"ONLINE","state":"OFFLINE"}' },
    { what: "a huge number", text: "1".repeat(5000) },
    { what: "__proto__ key", text: '{"__proto__":{"polluted":true}}' },
    { what: "YAML", text: "tasks:\n  - code: a\n    type: SHELL\n" },
    { what: "a YAML bomb", text: 'a: &a ["x","x"]\nb: &b [*a,*a]\nc: &c [*b,*b]\nd: [*c,*c,*c]\n' },
    { what: "10,000 nested arrays", text: deeplyNested(10_000, "array") },
    { what: "10,000 nested objects", text: deeplyNested(10_000, "object") },
  ),
);

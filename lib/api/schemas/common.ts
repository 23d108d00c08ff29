/**
 * Building blocks of the HTTP API's JSON Schemas (OpenAPI 3.1 uses JSON Schema 2020-12). Request
 * bodies come from the zod schemas that validate them ({@link schemaOf}); answers are written as
 * JSON Schema in the files next to this one, and every answer of the API integration tests is
 * checked against them (test/helpers/answer-schemas.ts, which also holds an object closed unless
 * its schema says `additionalProperties`). Both end up under `components.schemas` of the OpenAPI
 * document, and from there in the CLI's generated types.
 */
import { z } from "zod";

/** A JSON Schema (or OpenAPI fragment) as plain data. */
export type JsonSchema = Record<string, unknown>;

/** The JSON Schema of what a zod schema accepts (`io: "input"`: defaulted fields optional). */
export function schemaOf(s: z.ZodType): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  return rest;
}

/**
 * The property schemas of a zod object, without `default` (an answer's field has a value, not a
 * default): for answers that echo a request body's fields. An answer that shows a field
 * otherwise overrides it after the spread (the field keeps its place).
 */
export function fieldsOf(s: z.ZodObject): JsonSchema {
  const properties = (schemaOf(s).properties ?? {}) as Record<string, JsonSchema>;
  return Object.fromEntries(
    Object.entries(properties).map(([k, { default: _default, ...rest }]) => [k, rest]),
  );
}

/** A reference to a schema under `components.schemas` (openapi.test.ts checks each resolves). */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** An ISO-8601 instant, e.g. `2024-05-01T00:00:00.000Z`. */
export const iso: JsonSchema = { type: "string", format: "date-time" };
export const str: JsonSchema = { type: "string" };
export const int: JsonSchema = { type: "integer" };
/** `{name: value}` of strings: parameters, outputs. */
export const stringMap: JsonSchema = { type: "object", additionalProperties: { type: "string" } };

/** One of `values`. */
export const enumOf = (values: readonly string[], description?: string): JsonSchema => ({
  enum: [...values],
  ...(description !== undefined ? { description } : {}),
});

/** `schema` with a description. */
export const described = (schema: JsonSchema, description: string): JsonSchema => ({
  ...schema,
  description,
});

/** An object answer: its properties, and those always present. */
export const object = (
  properties: Record<string, JsonSchema>,
  required: readonly string[] = [],
  extra: JsonSchema = {},
): JsonSchema => ({
  type: "object",
  ...extra,
  ...(required.length > 0 ? { required: [...required] } : {}),
  properties,
});

/** A list answer: `items` of one component and, when more exist, `nextToken`. */
export const page = (item: string, more: Record<string, JsonSchema> = {}): JsonSchema =>
  object({ items: { type: "array", items: ref(item) }, nextToken: str, ...more }, ["items"]);

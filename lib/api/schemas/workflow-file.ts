// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${1:name} in plain strings is the snippet syntax of yaml-language-server
/**
 * The JSON Schema (draft 2020-12) of one document of a workflow file, what `shoal apply -f` and
 * `shoal validate -f` read (lib/cli/documents.ts): a WorkflowDefinition (the body of
 * `PUT /v1/workflows/{name}`, converted from its zod validator as the OpenAPI document's is)
 * plus `name`, with a description on every field for editors' hover and completion. Written to
 * schemas/workflow.json by `npm run openapi` (scripts/write-workflow-schema.ts) and served at
 * `GET /v1/schemas/workflow.json`. What a schema cannot say (unique codes, known upstreams, no
 * cycles, the branch rules of logic tasks, CEL and JSONPath syntax, time zones) is left to the
 * validators: `shoal validate` runs them.
 */

import { DEPENDENT_DATE_VALUES } from "../../core/dependent.js";
import { TASK_TYPES, type TaskType } from "../../core/model.js";
import { NAME_PATTERN, workflowSchema } from "../../core/validate.js";
import { VERSION } from "../../version.js";
import { workflowSchemaUrl } from "../../workflow-schema-url.js";
import { type JsonSchema, schemaOf } from "./common.js";
import { FIELD_DOCS, TASK_TYPE_DOCS } from "./workflow-file-docs.js";

/** `STEP_FUNCTIONS` → `StepFunctionsTask`: the `$defs` name of a task type's schema. */
export function taskDefName(type: TaskType): string {
  const words = type.toLowerCase().split("_");
  return `${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("")}Task`;
}

/**
 * Sets `description` on every property of `schema` (and of objects below it, list items
 * included) that FIELD_DOCS describes, looking a property up under each prefix in turn.
 */
function describe(schema: JsonSchema, prefixes: readonly string[], path = ""): void {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  for (const [key, sub] of Object.entries(properties ?? {})) {
    const full = path ? `${path}.${key}` : key;
    const words = prefixes.map((p) => FIELD_DOCS[`${p}.${full}`]).find((d) => d !== undefined);
    if (words !== undefined && sub.description === undefined) sub.description = words;
    describe(sub, prefixes, full);
  }
  const items = schema.items;
  if (items && typeof items === "object" && !Array.isArray(items)) {
    describe(items as JsonSchema, prefixes, `${path}[]`);
  }
}

/** A snippet per task type (yaml-language-server's `defaultSnippets`): its required fields. */
const SNIPPETS: Readonly<Record<TaskType, JsonSchema>> = {
  SHELL: { command: "${2:echo hello}" },
  HTTP: { url: "${2:https://example.com/}" },
  LAMBDA: { functionName: "${2:my-function}", payload: '${3:{"key": "value"\\}}' },
  STEP_FUNCTIONS: {
    stateMachineArn: "${2:arn:aws:states:us-east-1:123456789012:stateMachine:name}",
  },
  CONDITIONS: { upstream: ["${2:check}"], successNext: ["${3:ok}"], failedNext: ["${4:alert}"] },
  SWITCH: { cases: [{ condition: "${2:region == 'eu'}", next: "${3:eu}" }] },
  SUB_WORKFLOW: { workflow: "${2:child}" },
  DEPENDENT: {
    dependence: {
      groups: [
        { items: [{ workflow: "${2:upstream-workflow}", cycle: "day", dateValue: "today" }] },
      ],
    },
  },
};

/** The schema at `keys` below `schema`, or an empty one when the path is not there. */
function at(schema: JsonSchema | undefined, ...keys: string[]): JsonSchema {
  let here: unknown = schema;
  for (const k of keys) here = (here as Record<string, unknown> | undefined)?.[k];
  return (here ?? {}) as JsonSchema;
}

/**
 * What the zod conversion cannot carry (refinements) but a schema can say, added to a task
 * type's properties: a SHELL command that is not blank; the date values of a DEPENDENT item's
 * cycle.
 */
function refineTask(type: TaskType, task: JsonSchema): void {
  const props = task.properties as Record<string, JsonSchema>;
  if (type === "HTTP" && props.url) props.url.pattern = "^[Hh][Tt][Tt][Pp][Ss]?://";
  if (type === "SHELL" && props.command) {
    Object.assign(props.command, { minLength: 1, pattern: "\\S" });
  }
  if (type === "DEPENDENT") {
    const item = at(
      props.dependence,
      "properties",
      "groups",
      "items",
      "properties",
      "items",
      "items",
    );
    const itemProps = (item.properties ?? {}) as Record<string, JsonSchema>;
    if (itemProps.dateValue) {
      itemProps.dateValue.enum = [...new Set(Object.values(DEPENDENT_DATE_VALUES).flat())];
      item.allOf = Object.entries(DEPENDENT_DATE_VALUES).map(([cycle, values]) => ({
        if: { properties: { cycle: { const: cycle } }, required: ["cycle"] },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then`, not a thenable
        then: { properties: { dateValue: { enum: [...values] } } },
      }));
    }
  }
}

/**
 * Rewrites what draft-07 reads differently from 2020-12, in place: a tuple of equal items
 * (`prefixItems` with `items: false`, HTTP's `expectStatus`) becomes `items` with a fixed
 * length, which both read alike. yaml-language-server (VS Code's and other editors' YAML
 * support) validates by draft-07's rules, where `items: false` refuses every item.
 */
function draft07Compatible(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) draft07Compatible(n);
    return;
  }
  if (!node || typeof node !== "object") return;
  const o = node as JsonSchema;
  const prefix = o.prefixItems as unknown[] | undefined;
  if (Array.isArray(prefix) && o.items === false && prefix.length > 0) {
    const first = JSON.stringify(prefix[0]);
    if (prefix.every((p) => JSON.stringify(p) === first)) {
      o.items = prefix[0];
      delete o.prefixItems;
      o.minItems = prefix.length;
      o.maxItems = prefix.length;
    }
  }
  for (const v of Object.values(o)) draft07Compatible(v);
}

/**
 * The schema of one workflow file document.
 * @param version the package version: its release line names the schema's `$id`.
 * @throws Error when the validators' conversion no longer has the shape this expects (a task
 *   union by `type`): a change to lib/core/validate*.ts that needs a change here.
 */
export function workflowFileSchema(version: string = VERSION): JsonSchema {
  const definition = structuredClone(schemaOf(workflowSchema)) as JsonSchema & {
    properties: Record<string, JsonSchema>;
  };
  const tasks = definition.properties.tasks as JsonSchema & { items: { oneOf?: JsonSchema[] } };
  const alternatives = tasks.items?.oneOf;
  if (!Array.isArray(alternatives)) throw new Error("tasks.items is no longer a oneOf by type");
  const defs: Record<string, JsonSchema> = {};
  for (const alt of alternatives) {
    const type = (alt.properties as Record<string, { const?: unknown }>).type?.const;
    if (!(TASK_TYPES as readonly unknown[]).includes(type)) {
      throw new Error(`a task alternative without a known type const: ${String(type)}`);
    }
    const t = type as TaskType;
    refineTask(t, alt);
    describe(alt, [t, "task"]);
    defs[taskDefName(t)] = { title: `${t} task`, description: TASK_TYPE_DOCS[t], ...alt };
  }
  const taskDef: JsonSchema = {
    title: "Task",
    description: `One task of the DAG; its \`type\` (${TASK_TYPES.join(", ")}) decides its other fields.`,
    // Said once here too, so an unknown `type` is reported as such, not as the nearest type's.
    type: "object",
    properties: {
      code: { type: "string", description: FIELD_DOCS["task.code"] },
      type: { enum: [...TASK_TYPES], description: FIELD_DOCS["task.type"] },
    },
    required: ["code", "type"],
    oneOf: TASK_TYPES.map((t) => ({ $ref: `#/$defs/${taskDefName(t)}` })),
    defaultSnippets: TASK_TYPES.map((t) => ({
      label: `${t} task`,
      description: TASK_TYPE_DOCS[t],
      body: { code: "${1:name}", type: t, ...SNIPPETS[t] },
    })),
  };
  const { tasks: _tasks, ...fields } = definition.properties;
  const properties: Record<string, JsonSchema> = {
    name: { type: "string", pattern: NAME_PATTERN.source },
    ...fields,
    tasks: { ...tasks, items: { $ref: "#/$defs/Task" } },
    version: { type: "integer", minimum: 1 },
    createdAt: { type: "string" },
  };
  if (properties.timezone) properties.timezone.examples = ["UTC", "Europe/Berlin"];
  // Lists the validators refuse with a value twice.
  for (const list of ["on", "channels"]) {
    const schema = at(properties.alerts, "items", "properties", list);
    if (schema.type === "array") schema.uniqueItems = true;
  }
  const root: JsonSchema = { properties };
  draft07Compatible(root);
  draft07Compatible(defs);
  describe(root, ["workflow"]);
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: workflowSchemaUrl(version),
    $comment:
      "Generated from Shoal's validators by `npm run openapi` (scripts/write-workflow-schema.ts); do not edit.",
    title: "Shoal workflow",
    description:
      "One workflow definition, as `shoal apply -f` and `shoal validate -f` read it: `name` plus the body of PUT /v1/workflows/{name}. `shoal validate` also checks what a schema cannot (unique codes, known upstreams, no cycles, branch rules).",
    type: "object",
    properties: root.properties,
    required: definition.required,
    additionalProperties: false,
    $defs: { Task: taskDef, ...defs },
  };
}

let served: string | undefined;

/** The schema of this build as JSON text (built once): the body `GET /v1/schemas/workflow.json` answers. */
export function workflowFileSchemaText(): string {
  served ??= JSON.stringify(workflowFileSchema(VERSION));
  return served;
}

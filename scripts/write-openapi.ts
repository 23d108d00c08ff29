/**
 * `npm run openapi`: writes docs/openapi.json from the route table and the CLI's API types
 * (lib/cli/api-types.generated.ts) from that document, then the workflow file's JSON Schema
 * (schemas/workflow.json, write-workflow-schema.ts). Loads lib/api and the version only:
 * no runtime, no AWS client.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { apiDocument } from "../lib/api/routes.js";
import { VERSION } from "../lib/version.js";
import { API_TYPES_FILE, apiTypesSource } from "./api-types-source.js";
import { writeWorkflowSchema } from "./write-workflow-schema.js";

const root = new URL("../", import.meta.url);
const doc = apiDocument(VERSION);
const docFile = fileURLToPath(new URL("docs/openapi.json", root));
writeFileSync(docFile, `${JSON.stringify(doc, null, 2)}\n`);
process.stdout.write(`wrote ${docFile}\n`);
const typesFile = fileURLToPath(new URL(API_TYPES_FILE, root));
writeFileSync(typesFile, await apiTypesSource(doc));
process.stdout.write(`wrote ${typesFile}\n`);
for (const file of writeWorkflowSchema(fileURLToPath(root))) {
  process.stdout.write(`wrote ${file}\n`);
}

/** Writes docs/openapi.json from the code (`npm run openapi`). */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { VERSION } from "../runtime/runtime.js";
import { openApiDocument } from "./openapi.js";

const out = fileURLToPath(new URL("../../docs/openapi.json", import.meta.url));
writeFileSync(out, `${JSON.stringify(openApiDocument(VERSION), null, 2)}\n`);
process.stdout.write(`wrote ${out}\n`);

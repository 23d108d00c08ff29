/**
 * Imported for its effect by the processes that may run on the embedded backend (standalone,
 * `shoal worker`, `shoal sweeper`): lets lib/aws/clients.ts build embedded clients when the
 * configuration names a directory (SHOAL_EMBEDDED_DIR).
 */
import "./quiet-sqlite-warning.js";
import { registerEmbeddedBackend } from "../aws/embedded-registry.js";
import { openEmbeddedClients } from "./backend.js";

registerEmbeddedBackend((dir, region) => openEmbeddedClients(dir, region));

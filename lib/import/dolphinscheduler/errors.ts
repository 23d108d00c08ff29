/** The error of `shoal import dolphinscheduler` for input it cannot convert. */

/**
 * A problem with the export file (its shape, a workflow without tasks, an unknown upstream
 * code), worded for the user: it names the element, workflow or task. The CLI prints it as it
 * is, with exit code 1.
 */
export class DsImportError extends Error {
  override name = "DsImportError";
}

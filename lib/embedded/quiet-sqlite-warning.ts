/**
 * Keeps node:sqlite's one-time ExperimentalWarning off the user's terminal. The warning says the
 * API may change, which concerns Shoal (it pins Node with `engines` and tests every release it
 * supports), not the people running it. Imported before anything that loads node:sqlite, since
 * Node warns on the module's first load. Other warnings pass unchanged.
 */
const emit = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === "string" ? warning : warning.message;
  const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string })?.type;
  if (type === "ExperimentalWarning" && /SQLite/i.test(text)) return;
  (emit as (...a: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;

export {};

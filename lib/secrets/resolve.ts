/**
 * Reads the secrets a task needs, by name (`prod/db#password`), applying `#key` to a JSON
 * secret. Every failure is a {@link SecretReadError} whose message names the secret and says
 * what to do, never a value.
 */
import { parseSecretName, type SecretName } from "../core/secret-references.js";
import { SecretReadError, type SecretSource } from "./secret-source.js";

/**
 * A task's values shorter than this (in characters) are refused: masking `a` or `on` would turn
 * every occurrence of that text in the attempt's log into `***`. An empty value is allowed
 * (there is nothing to mask).
 */
export const MIN_SECRET_CHARS = 4;

/**
 * @throws SecretReadError for a value of 1 to {@link MIN_SECRET_CHARS} - 1 characters, naming
 *   its secret.
 */
export function checkMaskable(values: ReadonlyMap<string, string>): void {
  for (const [name, value] of values) {
    const chars = [...value].length;
    if (chars > 0 && chars < MIN_SECRET_CHARS) {
      throw new SecretReadError(
        `secret '${name}' is shorter than ${MIN_SECRET_CHARS} characters; it cannot be masked reliably`,
      );
    }
  }
}

/** A field of a JSON object secret, as text (strings as they are, other JSON values as JSON). */
function pickKey(name: SecretName, whole: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(whole);
  } catch {
    throw new SecretReadError(
      `secret '${name.full}': #${name.jsonKey} needs a JSON object, and secret '${name.base}' is not JSON`,
    );
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new SecretReadError(
      `secret '${name.full}': #${name.jsonKey} needs a JSON object, and secret '${name.base}' is not one`,
    );
  }
  const v = (doc as Record<string, unknown>)[name.jsonKey as string];
  if (v === undefined || v === null) {
    throw new SecretReadError(
      `secret '${name.full}': secret '${name.base}' has no key '${name.jsonKey}'`,
    );
  }
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * The value of each name, read concurrently from `source`.
 * @throws SecretReadError for a name that is not valid, not found (saying where it was looked
 *   for), unreadable, or whose `#key` does not apply.
 */
export async function resolveSecrets(
  names: readonly string[],
  source: SecretSource,
): Promise<Map<string, string>> {
  const parsed = names.map((n) => {
    const p = parseSecretName(n);
    if (typeof p === "string") throw new SecretReadError(`secret '${n}': the name ${p}`);
    return p;
  });
  const values = await Promise.all(
    parsed.map(async (name) => {
      const whole = await source.get(name);
      if (whole === undefined) {
        throw new SecretReadError(
          `secret '${name.base}' not found (looked in: ${source.where(name)})`,
        );
      }
      return [name.full, name.jsonKey === undefined ? whole : pickKey(name, whole)] as const;
    }),
  );
  return new Map(values);
}

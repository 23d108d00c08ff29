/**
 * The permission rule of a local secrets file: like ssh with a private key, Shoal refuses a
 * file that anyone but its owner can read or write (mode 0600 or stricter).
 */
import { statSync } from "node:fs";

/**
 * Why the secrets file `path` cannot be used (missing, not a regular file, readable or writable
 * by group or others), as a sentence with the fix, or undefined when it can.
 */
export function secretsFileProblem(path: string): string | undefined {
  let mode: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) return `secrets file ${path} is not a regular file`;
    mode = st.mode & 0o777;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? `secrets file ${path} does not exist`
      : `secrets file ${path} cannot be read (${code ?? (e as Error).message})`;
  }
  if ((mode & 0o077) !== 0) {
    const octal = mode.toString(8).padStart(4, "0");
    return `secrets file ${path} has mode ${octal}, which lets other users read or change it; it must be 0600 or stricter: run chmod 600 ${path}`;
  }
  return undefined;
}

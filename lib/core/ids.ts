/**
 * Deterministic ids: the same seed always names the same thing, so a repeated decision (a
 * redelivered event, an idempotency key) writes to the same item instead of creating another.
 */
import { createHash } from "node:crypto";

/** A UUID-shaped id (version nibble 5) derived from `seed` with SHA-256. */
export function deterministicId(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Id of the child instance a SUB_WORKFLOW task attempt starts. */
export function subInstanceId(parentId: string, code: string, attempt: number): string {
  return deterministicId(`sub\u0000${parentId}\u0000${code}\u0000${attempt}`);
}

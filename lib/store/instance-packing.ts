/**
 * How the instances table stores an instance's DAG progress, and which of its tasks set OUT
 * parameters: as deflated JSON in binary attributes. The dispatcher rewrites the instance
 * item on every step, and DynamoDB bills a write by the item's whole size (1 write unit per KB),
 * so a plain slot string of one byte per task made the cost of a task grow with its DAG: 10 KB,
 * 10 write units a step, at 10,000 tasks (docs/cost.md). Deflated, the slots cost about one byte
 * per run of equal states, and a running DAG has few runs (tasks are dispatched and end in
 * roughly their order), so the item stays small whatever the DAG's size. The OUT values
 * themselves stay on the task items (lib/engine/upstream-outputs.ts).
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { Progress } from "../core/progress.js";

/** A stored value as the document client returns it: Uint8Array for a binary attribute. */
type Stored = unknown;

/** Deflates a JSON value (raw deflate, RFC 1951: no header, no checksum; DynamoDB keeps the bytes). */
function pack(value: unknown): Uint8Array {
  return deflateRawSync(JSON.stringify(value));
}

function unpack(bytes: Uint8Array): unknown {
  return JSON.parse(inflateRawSync(bytes).toString("utf8"));
}

/** The stored form of a progress: `{ s: slots, a: attempts }` deflated. */
export function packProgress(p: Progress): Uint8Array {
  return pack({ s: p.slots, a: p.attempts });
}

/**
 * A stored progress read back: the deflated form, or the plain map items written before it.
 * @throws Error when a binary value is not a packed progress (a corrupt item).
 */
export function unpackProgress(stored: Stored): Progress {
  if (stored instanceof Uint8Array) {
    const v = unpack(stored) as { s?: unknown; a?: unknown };
    if (typeof v.s !== "string") throw new Error("stored progress has no slots");
    return { slots: v.s, attempts: (v.a ?? {}) as Progress["attempts"] };
  }
  return stored as Progress;
}

/** The stored form of an instance's `outputSlots`, deflated like the progress. */
export function packOutputSlots(slots: string): Uint8Array {
  return pack(slots);
}

/** {@link packOutputSlots} read back. */
export function unpackOutputSlots(stored: Stored): string {
  const v = stored instanceof Uint8Array ? unpack(stored) : stored;
  return typeof v === "string" ? v : "";
}

/**
 * Shoal names for DolphinScheduler names. DolphinScheduler takes any text as a workflow or
 * task name (Chinese names are common); Shoal's names and task codes match NAME_PATTERN
 * (ASCII). A name that already matches is kept as it is; any other becomes the slug of its
 * ASCII letters and digits (nothing is transliterated) plus a short hash of the whole original
 * text, so the result depends on the name alone: the same on every run and for every export of
 * the workflow (DolphinScheduler's codes change when a workflow is imported elsewhere).
 */
import { createHash } from "node:crypto";
import { LIMITS, NAME_PATTERN } from "../../core/validate.js";

/** Longest slug kept before the hash, characters. */
const SLUG_MAX = 48;
/** Hex digits of the hash: 24 bits, enough to keep names of one file apart. */
const HASH_DIGITS = 6;

/** The first {@link HASH_DIGITS} hex digits of SHA-256 of the UTF-8 text. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, HASH_DIGITS);
}

/**
 * The slug of `text`: its runs of ASCII letters and digits, lower-cased, joined by `-`, at most
 * {@link SLUG_MAX} characters; "" when it has none (an all-Chinese name).
 */
export function asciiSlug(text: string): string {
  const runs = text.match(/[A-Za-z0-9]+/g) ?? [];
  let slug = runs.join("-").toLowerCase();
  if (slug.length > SLUG_MAX) slug = slug.slice(0, SLUG_MAX).replace(/-+$/, "");
  return slug;
}

/**
 * The Shoal name for `original`: itself when it matches NAME_PATTERN, else
 * `<slug>-<hash>` (or `<prefix>-<hash>` when the slug is empty).
 * @param prefix stands in for an empty slug (`wf`, `task`).
 */
export function shoalName(original: string, prefix: string): string {
  if (NAME_PATTERN.test(original)) return original;
  const slug = asciiSlug(original);
  return `${slug || prefix}-${shortHash(original)}`;
}

/**
 * Gives unique names within one scope (the workflows of a file, the tasks of a workflow), in
 * the order asked. A name already given gets `-<code>` appended (the DolphinScheduler code of
 * the later one), which only happens when two originals are identical (two projects' workflows
 * of one name) or their hashes collide.
 */
export class NameScope {
  private readonly taken = new Set<string>();

  constructor(private readonly prefix: string) {}

  /** The unique Shoal name of `original`, whose DolphinScheduler code is `code`. */
  name(original: string, code: string): string {
    let name = shoalName(original, this.prefix);
    if (this.taken.has(name)) name = `${name.slice(0, 100)}-${code}`;
    for (let n = 2; this.taken.has(name); n++) name = `${name}-${n}`;
    this.taken.add(name);
    return name;
  }
}

/**
 * A display name for `original` (DolphinScheduler's name), when the Shoal name differs: one
 * line, control characters as spaces, at most LIMITS.displayNameChars characters.
 */
export function displayNameFor(original: string, shoal: string): string | undefined {
  if (original === shoal) return undefined;
  // Line breaks and other control characters: the validator refuses them in a display name.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  const text = original.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  if (text === "") return undefined;
  return [...text].slice(0, LIMITS.displayNameChars).join("");
}

/** A parameter name Shoal accepts (lib/core/schema-parts.ts paramName). */
export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_.]{0,127}$/;

/** A worker group name (it names SQS queues): the DolphinScheduler name, or its slug. */
export function workerGroupName(original: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/.test(original)) return original;
  const slug = asciiSlug(original).slice(0, 40).replace(/-+$/, "");
  return `${slug || "group"}-${shortHash(original)}`;
}

/**
 * Request targets as the fuzzer writes them: every character but unreserved ones
 * percent-encoded (lone surrogates too, as bytes no URI decoder accepts), path parameters put
 * into their template, the query string appended.
 */

/**
 * Percent-encodes every character but unreserved ones; a lone surrogate becomes the bytes
 * WTF-8 gives it (`%ED%A0%80`), which no URI decoder accepts.
 */
export function percentEncode(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out +=
        `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`.toUpperCase();
    } else {
      out += encodeURIComponent(text[i] as string).replace(
        /[!'()*]/g,
        (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
      );
    }
  }
  return out;
}

/**
 * The target of `template` with `params` in its `{name}` segments (percent-encoded, unless
 * `encoded[name]` says the value already is) and `query` after a `?`.
 */
export function target(
  template: string,
  params: Record<string, string>,
  query: Record<string, string>,
  encoded: Record<string, boolean> = {},
): string {
  const path = template.replace(/\{([^}]+)\}/g, (_, n: string) =>
    encoded[n] ? (params[n] ?? "") : percentEncode(params[n] ?? ""),
  );
  const q = Object.entries(query)
    .map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`)
    .join("&");
  return q ? `${path}?${q}` : path;
}

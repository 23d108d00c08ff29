/** The one thing the CLI needs of stdout and stderr, so tests can capture them. */

/** A writable text stream; `isTTY` decides whether progress is redrawn in place. */
export interface OutStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

/**
 * Downloads an attempt's whole log as a text file: the API's pages of 10,000 lines are read in
 * order and kept as one string per page, then saved from a Blob. The browser holds the log once
 * (about its size: 50 MB for a 50 MB log), never the page's DOM. On AWS, where one answer is at
 * most 6 MB, the pages keep each request under the limit.
 */
import type { LogPage } from "../../api";
import { BIG_PAGE } from "./log-window";

/**
 * Reads every line from the start until a page is not full (a running attempt: what it has
 * written so far) and saves them as `fileName`, one line per message with its ISO-8601 time.
 * @param read one page from `nextToken` (undefined: the first), `limit` lines.
 * @param onProgress lines read so far.
 * @throws whatever `read` throws (the API's error); nothing is saved then.
 */
export async function downloadLog(
  read: (token: string | undefined, limit: number) => Promise<LogPage>,
  fileName: string,
  onProgress: (lines: number) => void,
): Promise<number> {
  const parts: string[] = [];
  let token: string | undefined;
  let lines = 0;
  for (;;) {
    const page = await read(token, BIG_PAGE);
    if (page.lines.length > 0) {
      parts.push(`${page.lines.map((l) => `${l.timestamp} ${l.message}`).join("\n")}\n`);
    }
    lines += page.lines.length;
    onProgress(lines);
    token = page.nextToken;
    if (!token || page.lines.length < BIG_PAGE) break;
  }
  const href = URL.createObjectURL(new Blob(parts, { type: "text/plain;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = href;
  a.download = fileName;
  a.click();
  // The click has handed the Blob to the download; the URL is no longer needed.
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
  return lines;
}

/**
 * Malformed HTTP on a raw `net` socket: request lines that are not HTTP/1.1 (a target that is not
 * a URL, an unknown method, a bad version), bad header lines, conflicting lengths, bodies shorter
 * than their Content-Length, headers that never end, chunked garbage and random bytes. Each must
 * be answered (never a 5xx; a 4xx with a body carries the error shape) or closed, within the
 * server's request timeout plus a margin: no exchange may hold the socket.
 */
import { connect } from "node:net";
import fc from "fast-check";

/** The fuzz server's request timeout, ms: a truncated body is answered 408 within this. */
export const FUZZ_REQUEST_TIMEOUT_MS = 1_000;

/** One raw exchange: the bytes sent (each part written separately), and what it is. */
export interface RawCase {
  what: string;
  parts: Buffer[];
}

/** Longest an exchange may take before the server has answered or closed, ms. */
export const RAW_DEADLINE_MS = FUZZ_REQUEST_TIMEOUT_MS + 2_500;

const b = (text: string) => Buffer.from(text, "latin1");
const raw = (what: string, ...parts: string[]): RawCase => ({ what, parts: parts.map(b) });
/** Stands for the server's port in a case's Host (runRawCase writes it): any other Host is a 403. */
const PORT = "<port>";
const H = `Host: 127.0.0.1:${PORT}\r\nConnection: close\r\n`;

/** Every malformed exchange the fuzzer always sends (the random ones come on top). */
export const FIXED_RAW_CASES: RawCase[] = [
  raw("target not a URL", `GET http://[::1/v1/health HTTP/1.1\r\n${H}\r\n`),
  raw(
    "target not a URL, with a body",
    `POST http://[::1/v1/events HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`,
  ),
  raw("absolute-form target", `GET http://evil.example/v1/health HTTP/1.1\r\n${H}\r\n`),
  raw("asterisk target", `GET * HTTP/1.1\r\n${H}\r\n`),
  raw("CONNECT", `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${H}\r\n`),
  raw("unknown method", `BREW /v1/health HTTP/1.1\r\n${H}\r\n`),
  raw("lowercase method", `get /v1/health HTTP/1.1\r\n${H}\r\n`),
  raw("HTTP/9.9", `GET /v1/health HTTP/9.9\r\n${H}\r\n`),
  raw("HTTP/1.0 without Host", "GET /v1/health HTTP/1.0\r\n\r\n"),
  raw("no version", `GET /v1/health\r\n${H}\r\n`),
  raw("two spaces", `GET  /v1/health HTTP/1.1\r\n${H}\r\n`),
  raw("space in target", `GET /v1/he alth HTTP/1.1\r\n${H}\r\n`),
  raw("NUL in target", `GET /v1/health\u0000 HTTP/1.1\r\n${H}\r\n`),
  raw("bad percent-encoding", `GET /v1/workflows/%ZZ%E2%82 HTTP/1.1\r\n${H}\r\n`),
  raw("traversal", `GET /v1/../../etc/passwd HTTP/1.1\r\n${H}\r\n`),
  raw("double slashes", `GET //v1//health// HTTP/1.1\r\n${H}\r\n`),
  raw("20 KB target", `GET /v1/workflows/${"a".repeat(20_000)} HTTP/1.1\r\n${H}\r\n`),
  raw("header without colon", `GET /v1/health HTTP/1.1\r\n${H}Broken header line\r\n\r\n`),
  raw("obsolete line folding", `GET /v1/health HTTP/1.1\r\n${H}X-A: 1\r\n  folded\r\n\r\n`),
  raw("space before colon", `GET /v1/health HTTP/1.1\r\n${H}X-A : 1\r\n\r\n`),
  raw("NUL in a header value", `GET /v1/health HTTP/1.1\r\n${H}X-A: a\u0000b\r\n\r\n`),
  raw("bare LF line ends", `GET /v1/health HTTP/1.1\n${H.replace(/\r\n/g, "\n")}\n`),
  raw("20 KB header", `GET /v1/health HTTP/1.1\r\n${H}X-Big: ${"b".repeat(20_000)}\r\n\r\n`),
  raw(
    "500 headers",
    `GET /v1/health HTTP/1.1\r\n${H}${Array.from({ length: 500 }, (_, i) => `X-${i}: ${i}\r\n`).join("")}\r\n`,
  ),
  raw("negative Content-Length", `POST /v1/events HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\n`),
  raw("Content-Length not a number", `POST /v1/events HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`),
  raw(
    "two Content-Lengths",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
  ),
  raw(
    "huge Content-Length",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Length: 99999999999999999999\r\n\r\n{}`,
  ),
  raw(
    "Content-Length over 5 MB",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 6000000\r\n\r\n{"Entries":[`,
  ),
  raw(
    "Content-Length and chunked",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
  ),
  raw(
    "unknown transfer coding",
    `POST /v1/events HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\nxx`,
  ),
  raw(
    "chunk size not hex",
    `POST /v1/events HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n`,
  ),
  raw(
    "chunk size overflow",
    `POST /v1/events HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\nabc\r\n0\r\n\r\n`,
  ),
  raw(
    "chunk longer than its size",
    `POST /v1/events HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n2\r\nabcdef\r\n0\r\n\r\n`,
  ),
  raw(
    "chunk extension garbage",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;\u0001\u0002=\r\n{}\r\n0\r\n\r\n`,
  ),
  raw(
    "chunked, never finished",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n`,
  ),
  raw(
    "body shorter than Content-Length",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"Entries":`,
  ),
  raw(
    "PUT body shorter than Content-Length",
    `PUT /v1/workflows/fz-a HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"tasks":[`,
  ),
  raw("headers never end", `GET /v1/health HTTP/1.1\r\n${H}X-Slow: 1\r\n`),
  raw("request line never ends", "GET /v1/hea"),
  raw("nothing sent", ""),
  raw("only CRLFs", "\r\n\r\n\r\n"),
  raw(
    "TLS hello on plain HTTP",
    "\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003",
  ),
  raw("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
  raw(
    "a bad request pipelined after a good one",
    `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:${PORT}\r\n\r\nGET http://[::1/ HTTP/1.1\r\n${H}\r\n`,
  ),
  raw(
    "the body sent a byte at a time",
    `POST /v1/events HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n`,
    "{",
    "}",
  ),
  raw("valid request in pieces", "GET /v1/heal", `th HTTP/1.1\r\n${H}`, "\r\n"),
];

/** A raw exchange: one of the fixed ones, or random bytes, or a request line of random bytes. */
export const rawCaseArb: fc.Arbitrary<RawCase> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FIXED_RAW_CASES) },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 200 })
      .map((bytes) => ({ what: "random bytes", parts: [Buffer.from(bytes)] })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom("GET", "POST", "PUT", "DELETE"),
        fc.uint8Array({ minLength: 1, maxLength: 60 }),
      )
      .map(([m, bytes]) => ({
        what: "request target of random bytes",
        parts: [b(`${m} /v1/`), Buffer.from(bytes), b(` HTTP/1.1\r\n${H}\r\n`)],
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 }))
      .map(([name, value]) => ({
        what: "a random header line",
        parts: [b(`GET /v1/health HTTP/1.1\r\n${H}`), Buffer.from(`${name}: ${value}\r\n\r\n`)],
      })),
  },
);

/** What the server sent back, parsed enough to judge it. */
interface RawAnswer {
  statuses: number[];
  bodies: string[];
  closedAfterMs: number | undefined;
}

/** Splits what came back into responses (status, body by Content-Length or chunks). */
function parse(bytes: Buffer): Pick<RawAnswer, "statuses" | "bodies"> {
  const statuses: number[] = [];
  const bodies: string[] = [];
  let rest = bytes.toString("latin1");
  while (rest.startsWith("HTTP/")) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) break;
    const head = rest.slice(0, end);
    statuses.push(Number(head.split(" ")[1]));
    rest = rest.slice(end + 4);
    let body = "";
    if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      for (;;) {
        const line = rest.indexOf("\r\n");
        const size = line < 0 ? 0 : Number.parseInt(rest.slice(0, line), 16);
        if (!(size > 0)) {
          rest = line < 0 ? "" : rest.slice(line + 4);
          break;
        }
        body += rest.slice(line + 2, line + 2 + size);
        rest = rest.slice(line + 2 + size + 2);
      }
    } else {
      // Without a length (HTTP/1.0), the body runs to the close.
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? rest.length);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    }
    bodies.push(Buffer.from(body, "latin1").toString("utf8"));
  }
  return { statuses, bodies };
}

/** `part` with the server's port in place of {@link PORT} (latin1 keeps every byte as it is). */
function withPort(part: Buffer, port: number): Buffer {
  const text = part.toString("latin1");
  return text.includes(PORT) ? b(text.replaceAll(PORT, String(port))) : part;
}

/**
 * Sends one raw case and judges what comes back.
 * @returns its problems (empty when none), each naming the case.
 */
export async function runRawCase(port: number, c: RawCase): Promise<string[]> {
  const started = performance.now();
  const answer = await new Promise<RawAnswer & { held: boolean }>((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1");
    const done = (held: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const closedAfterMs = held ? undefined : performance.now() - started;
      resolve({ ...parse(Buffer.concat(chunks)), closedAfterMs, held });
    };
    const timer = setTimeout(() => done(true), RAW_DEADLINE_MS);
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", () => {});
    socket.on("close", () => done(false));
    socket.on("connect", async () => {
      for (const part of c.parts) {
        if (socket.destroyed) return;
        socket.write(withPort(part, port));
        if (c.parts.length > 1) await new Promise((r) => setTimeout(r, 20));
      }
    });
  });
  const problems: string[] = [];
  const name = `raw case "${c.what}" (${JSON.stringify(Buffer.concat(c.parts).toString("latin1").slice(0, 160))})`;
  if (answer.held)
    problems.push(
      `${name}: the socket was neither answered and closed within ${RAW_DEADLINE_MS} ms`,
    );
  answer.statuses.forEach((status, i) => {
    const body = answer.bodies[i] ?? "";
    if (!(status >= 200 && status < 500))
      problems.push(`${name}: answered ${status} ${body.slice(0, 200)}`);
    // Node's 408 has no body (docs/api.md); every other 4xx carries the error shape.
    if (status >= 400 && status !== 408) {
      try {
        const err = JSON.parse(body).error;
        if (typeof err?.code !== "string" || typeof err?.message !== "string") {
          throw new Error("no code or message");
        }
      } catch (e) {
        problems.push(
          `${name}: a ${status} whose body is not the error shape (${(e as Error).message}): ${body.slice(0, 200)}`,
        );
      }
    }
  });
  return problems;
}

/**
 * Fuzzes the HTTP API from its own contract (docs/openapi.json, built from lib/api/routes.ts):
 * generated requests to every path and method of the document (the route table's, which
 * `npm run openapi` writes to docs/openapi.json; cases.ts) against the real node
 * HTTP server standalone uses (harness.ts), plus malformed HTTP on a raw socket (raw-socket.ts).
 *
 * Properties: never a 5xx or a stack trace; every 4xx carries the error body with the code of
 * its status, and a 400 names the field a one-field-broken body broke (checks.ts); every answer
 * matches the OpenAPI document; a refused request writes nothing (the tables are digested and
 * compared, see `WriteGuard`) and sends nothing; the server stays healthy.
 *
 * Seeded: `SHOAL_FUZZ_SEED` (default: a new one each run, printed on failure) and
 * `SHOAL_FUZZ_RUNS` (default 2,000 cases: 95 % HTTP requests, 5 % raw-socket exchanges, of which
 * every fixed one of raw-socket.ts), e.g.
 * `SHOAL_FUZZ_RUNS=20000 SHOAL_FUZZ_SEED=42 npx vitest run test/fuzz`.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiDocument } from "../../lib/api/routes.js";
import { VERSION } from "../../lib/version.js";
import type { Components } from "./arbitraries.js";
import { caseArb, describeCase, type FuzzCase } from "./cases.js";
import { bodyValidator, problemsOf } from "./checks.js";
import { createFixtures, type Fixtures } from "./fixtures.js";
import { type FuzzServer, startFuzzServer } from "./harness.js";
import { FIXED_RAW_CASES, type RawCase, rawCaseArb, runRawCase } from "./raw-socket.js";
import { digestTables, type TablesDigest, writeRequests } from "./tables.js";

const SEED = Number(process.env.SHOAL_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.SHOAL_FUZZ_RUNS ?? 2_000);
if (!Number.isSafeInteger(SEED) || !Number.isSafeInteger(RUNS) || RUNS < 1) {
  throw new Error("SHOAL_FUZZ_SEED must be a whole number and SHOAL_FUZZ_RUNS one >= 1");
}
const RAW_RUNS = Math.max(10, Math.round(RUNS * 0.05));
const HTTP_RUNS = Math.max(1, RUNS - RAW_RUNS);
/** Tables compared and health checked every this many HTTP cases. */
const CHECK_EVERY = 100;
/** Failures listed in a failing test's message. */
const SHOWN = 8;

const doc = apiDocument(VERSION) as unknown as Parameters<typeof caseArb>[0] & {
  components: { schemas: Components };
};

let server: FuzzServer;
let fixtures: Fixtures;

beforeAll(async () => {
  server = await startFuzzServer();
  fixtures = await createFixtures(server);
});

afterAll(async () => {
  await server?.stop();
});

const reproduce = () => `SHOAL_FUZZ_SEED=${SEED} SHOAL_FUZZ_RUNS=${RUNS} npx vitest run test/fuzz`;

/**
 * Proves that refused requests write nothing, cheaply: a request that sent no DynamoDB write
 * cannot have changed a table, so the tables are digested only after a request that sent one
 * (a refused one must leave them as the last digest had them; an accepted one gives the new
 * baseline), and every {@link CHECK_EVERY} cases, to catch a write the counter missed.
 */
class WriteGuard {
  private baseline!: TablesDigest;
  private writes = { dynamo: 0, sqs: 0 };
  digests = 0;
  /** Refused requests that sent a DynamoDB write (a conditional one that failed): compared. */
  refusedCompared = 0;

  async start(): Promise<void> {
    this.baseline = await this.digest();
    this.writes = writeRequests(server.rt.clients);
  }

  private async digest(): Promise<TablesDigest> {
    this.digests++;
    return digestTables(server.rt.clients, server.rt.config.tables);
  }

  /** What a request that just finished wrote that it should not have. */
  async after(refused: boolean): Promise<string[]> {
    const now = writeRequests(server.rt.clients);
    const dynamo = now.dynamo - this.writes.dynamo;
    const sqs = now.sqs - this.writes.sqs;
    this.writes = now;
    const problems: string[] = [];
    if (refused && sqs > 0) problems.push(`a refused request sent ${sqs} SQS message batch(es)`);
    if (dynamo === 0) return problems;
    const after = await this.digest();
    if (refused) this.refusedCompared++;
    if (refused && after.hash !== this.baseline.hash) {
      problems.push(
        `a refused request changed the tables: items ${JSON.stringify(this.baseline.items)} → ${JSON.stringify(after.items)}`,
      );
    }
    this.baseline = after;
    return problems;
  }

  /** Compares the tables with the baseline (nothing may have changed unseen). */
  async check(): Promise<string | undefined> {
    const now = await this.digest();
    const before = this.baseline;
    this.baseline = now;
    this.writes = writeRequests(server.rt.clients);
    return now.hash === before.hash
      ? undefined
      : `the tables changed with no write request counted: items ${JSON.stringify(before.items)} → ${JSON.stringify(now.items)}`;
  }
}

/** Cases run and answers given, by kind and status: printed after the run. */
function tally(): { add(kind: string, status: number): void; text(): string } {
  const counts = new Map<string, Map<number, number>>();
  return {
    add(kind, status) {
      const m = counts.get(kind) ?? new Map<number, number>();
      m.set(status, (m.get(status) ?? 0) + 1);
      counts.set(kind, m);
    },
    text: () =>
      [...counts]
        .map(
          ([k, m]) =>
            `${k}: ${[...m]
              .sort(([a], [b]) => a - b)
              .map(([s, n]) => `${s}×${n}`)
              .join(" ")}`,
        )
        .join("\n"),
  };
}

describe("API fuzzing from docs/openapi.json", () => {
  it(`${HTTP_RUNS} generated requests: no 5xx, error shape, field named, refused writes nothing, healthy`, async () => {
    const valid = bodyValidator(doc.components.schemas);
    const guard = new WriteGuard();
    await guard.start();
    const failures: string[] = [];
    const seen = tally();
    let n = 0;
    let slowest = { ms: 0, case: "" };
    const started = performance.now();
    // Each failure cut at 3,000 characters (a hostile value or a 1 MB path would drown the rest).
    const fail = (text: string) =>
      failures.push(`#${n} ${text.length > 3000 ? `${text.slice(0, 3000)}…` : text}`);

    await fc.assert(
      fc.asyncProperty(caseArb(doc, fixtures), async (c: FuzzCase) => {
        n++;
        let answer: Awaited<ReturnType<FuzzServer["send"]>>;
        const sent = performance.now();
        try {
          answer = await server.send(c.request);
          const took = performance.now() - sent;
          if (took > slowest.ms) slowest = { ms: took, case: describeCase(c).split("\n")[0] ?? "" };
        } catch (e) {
          fail(`${describeCase(c)}\n  → no answer: ${(e as Error).message}`);
          return true;
        }
        seen.add(c.kind, answer.status);
        const problems = problemsOf(c, answer, valid);
        problems.push(
          ...server.takeViolations().map((v) => (v.length > 800 ? `${v.slice(0, 800)}…` : v)),
        );
        problems.push(...(await guard.after(answer.status >= 300)));
        const logs = server.takeLogs();
        if (problems.length) {
          fail(
            `${describeCase(c)}\n  → ${answer.status} ${answer.text.slice(0, 500)}\n  problems: ${problems.join("; ")}${logs.length ? `\n  server log: ${logs.join("\n    ")}` : ""}`,
          );
        }
        if (n % CHECK_EVERY === 0) {
          const unseen = await guard.check();
          if (unseen) fail(`after case ${n}: ${unseen}`);
          const health = await server.send({ method: "GET", path: "/v1/health", headers: {} });
          if (health.status !== 200)
            fail(`after case ${n}: GET /v1/health ${health.status} ${health.text}`);
        }
        return true;
      }),
      { seed: SEED, numRuns: HTTP_RUNS, endOnFailure: true },
    );

    const unseen = await guard.check();
    if (unseen) fail(`at the end: ${unseen}`);
    const health = await server.send({ method: "GET", path: "/v1/health", headers: {} });
    expect(health.status, health.text).toBe(200);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `api fuzz: seed ${SEED}, ${n} requests in ${seconds} s, ${guard.digests} table digests (${guard.refusedCompared} after a refused request that sent a write), ${failures.length} failure(s); slowest ${slowest.ms.toFixed(0)} ms: ${slowest.case}\n${seen.text()}`,
    );
    expect(
      failures.length,
      `${failures.length} of ${n} fuzzed requests failed a property (reproduce: ${reproduce()}):\n\n${failures.slice(0, SHOWN).join("\n\n")}`,
    ).toBe(0);
  }, 600_000);

  it(`${RAW_RUNS} raw-socket exchanges: malformed HTTP is answered or closed in time, never a 5xx`, async () => {
    const failures: string[] = [];
    const started = performance.now();
    let n = 0;
    const runBatch = async (batch: RawCase[]) => {
      // In parallel: a truncated body waits out the request timeout.
      const results = await Promise.all(batch.map((r) => runRawCase(server.port, r)));
      n += batch.length;
      failures.push(...results.flat());
    };
    // Every fixed case once, then random ones up to RAW_RUNS in all, ten at a time.
    for (let i = 0; i < FIXED_RAW_CASES.length; i += 10) {
      await runBatch(FIXED_RAW_CASES.slice(i, i + 10));
    }
    const randomRuns = Math.max(0, RAW_RUNS - FIXED_RAW_CASES.length);
    if (randomRuns > 0) {
      await fc.assert(
        fc.asyncProperty(
          fc.array(rawCaseArb, { minLength: randomRuns, maxLength: randomRuns }),
          async (cases) => {
            for (let i = 0; i < cases.length; i += 10) await runBatch(cases.slice(i, i + 10));
            return true;
          },
        ),
        { seed: SEED, numRuns: 1, endOnFailure: true },
      );
    }
    const health = await server.send({ method: "GET", path: "/v1/health", headers: {} });
    expect(health.status, health.text).toBe(200);
    const logs = server.takeLogs().filter((l) => !l.includes("bad request target"));
    console.log(
      `raw-socket fuzz: seed ${SEED}, ${n} exchanges in ${((performance.now() - started) / 1000).toFixed(1)} s, ${failures.length} failure(s)`,
    );
    expect(
      failures.length,
      `${failures.length} raw-socket exchanges failed (reproduce: ${reproduce()}):\n\n${failures.slice(0, SHOWN).join("\n\n")}`,
    ).toBe(0);
    expect(logs, "unexpected server log lines").toEqual([]);
  }, 300_000);
});

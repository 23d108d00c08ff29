/**
 * Test hook: injected latency and throttling / 5xx errors on a fraction of DynamoDB and SQS
 * calls, for fault-injection runs (`npm run chaos`, scripts/chaos/). Off unless
 * `SHOAL_TEST_FAULTS` is set ({@link parseFaultSpec} reads it; lib/aws/config.ts puts the result
 * on `AwsConfig.faults`, and `createAwsClients` adds {@link addFaultInjection} to each client).
 *
 * The faults are thrown inside the SDK's retry loop (a `deserialize`-step middleware, below the
 * `finalizeRequest` step's retry middleware), as the SDK's own exception classes with the
 * `name`, `$fault`, `$metadata.httpStatusCode` and `$retryable` a real answer gives: the SDK
 * classifies and retries them as it would the real ones (throttling errors by name, 5xx by
 * status), and only a call whose every attempt failed reaches Shoal's code.
 */
import {
  DynamoDBServiceException,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from "@aws-sdk/client-dynamodb";
import { RequestThrottled, SQSServiceException } from "@aws-sdk/client-sqs";

/** The services faults can be injected into (keys of {@link FaultSpec}). */
export type FaultService = "dynamodb" | "sqs";

/** What is injected into the calls of one service. */
export interface ServiceFaults {
  /** Fraction of calls (each attempt drawn anew, 0..1) answered with an injected error. */
  error: number;
  /** Fraction of calls (0..1) delayed before they are sent. */
  latency: number;
  /** The delay of a delayed call, ms: drawn uniformly from `[min, max]`. */
  latencyMs: { min: number; max: number };
}

/** Faults by service; a service left out is untouched. */
export type FaultSpec = Partial<Record<FaultService, ServiceFaults>>;

const SERVICES: readonly FaultService[] = ["dynamodb", "sqs"];

/**
 * Parses the `SHOAL_TEST_FAULTS` format: services separated by `;`, each
 * `service:key=value,key=value`, where `service` is `dynamodb` or `sqs` and the keys are
 * - `error=P`: a fraction P (0..1) of calls fail with an injected error;
 * - `latency=P:D`: a fraction P of calls wait D first; D is `50ms`, `1s`, or a range `20-200ms`.
 *
 * Example: `dynamodb:error=0.05,latency=0.1:50ms;sqs:error=0.03`.
 * @throws Error naming the part that does not parse (`SHOAL_TEST_FAULTS: …`).
 */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: FaultSpec = {};
  const fail = (what: string): never => {
    throw new Error(
      `SHOAL_TEST_FAULTS: ${what} (format: dynamodb:error=0.05,latency=0.1:50ms;sqs:error=0.03)`,
    );
  };
  for (const part of text.split(";").map((p) => p.trim())) {
    if (part === "") continue;
    const colon = part.indexOf(":");
    if (colon < 0) fail(`'${part}' names no service`);
    const service = part.slice(0, colon).trim().toLowerCase();
    if (!SERVICES.includes(service as FaultService))
      fail(`unknown service '${service}' (expected ${SERVICES.join(" or ")})`);
    if (spec[service as FaultService]) fail(`service '${service}' is given twice`);
    const faults: ServiceFaults = { error: 0, latency: 0, latencyMs: { min: 0, max: 0 } };
    for (const kv of part
      .slice(colon + 1)
      .split(",")
      .map((s) => s.trim())) {
      if (kv === "") continue;
      const [key, value = ""] = kv.split("=", 2).map((s) => s.trim());
      if (key === "error") faults.error = fraction(value, kv, fail);
      else if (key === "latency") {
        const [p = "", d] = value.split(":", 2);
        if (d === undefined) fail(`'${kv}' needs a delay: latency=P:50ms`);
        faults.latency = fraction(p, kv, fail);
        faults.latencyMs = delay(d ?? "", kv, fail);
      } else fail(`unknown key '${key}' in '${kv}' (expected error or latency)`);
    }
    spec[service as FaultService] = faults;
  }
  return spec;
}

function fraction(raw: string, where: string, fail: (what: string) => never): number {
  const n = Number(raw);
  if (raw === "" || !Number.isFinite(n) || n < 0 || n > 1)
    fail(`'${where}': '${raw}' is not a fraction between 0 and 1`);
  return n;
}

/** `50ms`, `2s`, `20-200ms`: milliseconds. */
function delay(
  raw: string,
  where: string,
  fail: (what: string) => never,
): { min: number; max: number } {
  const m = /^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?(ms|s)$/.exec(raw.trim());
  if (!m) return fail(`'${where}': delay '${raw}' must look like 50ms, 1s or 20-200ms`);
  const unit = m[3] === "s" ? 1000 : 1;
  const min = Number(m[1]) * unit;
  const max = m[2] === undefined ? min : Number(m[2]) * unit;
  if (max < min) fail(`'${where}': delay range '${raw}' runs backwards`);
  return { min, max };
}

/** The errors a real service answers under load, as the SDK would build them from the answer. */
const ERRORS: Record<FaultService, Array<(n: number) => Error>> = {
  dynamodb: [
    (n) => throttled(new ProvisionedThroughputExceededException(opts(n, 400))),
    (n) => throttled(new RequestLimitExceeded(opts(n, 400))),
    (n) => throttled(new ThrottlingException(opts(n, 400))),
    (n) => new InternalServerError(opts(n, 500)),
    (n) =>
      new DynamoDBServiceException({
        name: "ServiceUnavailable",
        $fault: "server",
        ...opts(n, 503),
      }),
  ],
  sqs: [
    (n) => throttled(new RequestThrottled(opts(n, 400))),
    (n) => new SQSServiceException({ name: "InternalError", $fault: "server", ...opts(n, 500) }),
    (n) =>
      new SQSServiceException({ name: "ServiceUnavailable", $fault: "server", ...opts(n, 503) }),
  ],
};

function opts(n: number, httpStatusCode: number) {
  return {
    message: `injected fault #${n} (SHOAL_TEST_FAULTS)`,
    $metadata: { httpStatusCode, requestId: `shoal-test-fault-${n}` },
  };
}

/** A throttling answer: the SDK backs off longer and retries it (`$retryable.throttling`). */
function throttled<E extends Error>(e: E): E {
  Object.assign(e, { $retryable: { throttling: true } });
  return e;
}

/** What {@link addFaultInjection} needs of a client: its middleware stack. */
interface WithStack {
  middlewareStack: {
    add(
      mw: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>,
      options: { step: "deserialize"; name: string; priority: "high" },
    ): void;
  };
}

/** Faults injected so far by this process, all services (read by tests). */
export const injectedFaults = { errors: 0, delays: 0 };

/**
 * Adds the faults `spec` names for `service` (`DynamoDB`, `SQS`: the name is matched without
 * case) to `client`'s middleware stack; does nothing for a service `spec` leaves out.
 * `random` draws in [0, 1) (tests pass a seeded one; default `Math.random`).
 */
export function addFaultInjection(
  client: unknown,
  service: string,
  spec: FaultSpec,
  random: () => number = Math.random,
): void {
  const key = service.toLowerCase() as FaultService;
  const faults = spec[key];
  if (!faults || (faults.error === 0 && faults.latency === 0)) return;
  const errors = ERRORS[key];
  (client as WithStack).middlewareStack.add(
    (next) => async (args) => {
      if (faults.latency > 0 && random() < faults.latency) {
        injectedFaults.delays++;
        const { min, max } = faults.latencyMs;
        await new Promise((r) => setTimeout(r, min + random() * (max - min)));
      }
      if (faults.error > 0 && random() < faults.error) {
        const n = ++injectedFaults.errors;
        const make = errors[Math.floor(random() * errors.length)] ?? errors[0];
        if (make) throw make(n);
      }
      return next(args);
    },
    { step: "deserialize", name: "shoalTestFaults", priority: "high" },
  );
}

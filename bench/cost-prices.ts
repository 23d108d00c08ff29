/**
 * One dated table of AWS list prices (us-east-1, on-demand, no free tier) and what a run's
 * metered usage costs at them (pure). Every price names the page it comes from; those that could
 * not be confirmed from a stored copy of that page say so in `confirmed`.
 */

/** When the prices were read. */
export const PRICES_DATE = "2026-11-25";

/** One price: USD per `unit`. */
export interface Price {
  usd: number;
  unit: string;
  url: string;
  /** How it was confirmed (or why it was not). */
  confirmed: string;
}

/** us-east-1 on-demand list prices. */
export const PRICES = {
  dynamoWriteRequestUnit: {
    usd: 0.625 / 1e6,
    unit: "write request unit (on-demand, Standard table class)",
    url: "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    confirmed:
      "$0.625 per million WRU since the November 2024 cut (third-party copies of the page)",
  },
  dynamoReadRequestUnit: {
    usd: 0.125 / 1e6,
    unit: "read request unit (on-demand)",
    url: "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    confirmed: "$0.125 per million RRU (third-party copies of the page)",
  },
  sqsStandardRequest: {
    usd: 0.4 / 1e6,
    unit: "SQS standard request (64 KB chunk), first 100 billion a month",
    url: "https://aws.amazon.com/sqs/pricing/",
    confirmed: "not confirmed from a stored copy: list price as published since 2019",
  },
  sqsFifoRequest: {
    usd: 0.5 / 1e6,
    unit: "SQS FIFO request (64 KB chunk), first 100 billion a month",
    url: "https://aws.amazon.com/sqs/pricing/",
    confirmed: "not confirmed from a stored copy: list price as published since 2019",
  },
  lambdaRequest: {
    usd: 0.2 / 1e6,
    unit: "Lambda invocation (arm64 and x86 alike)",
    url: "https://aws.amazon.com/lambda/pricing/",
    confirmed: "not confirmed from a stored copy",
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    unit: "Lambda GB-second, arm64 (the stack's architecture: cdk/handler-function.ts), first 7.5 billion GB-s a month",
    url: "https://aws.amazon.com/lambda/pricing/",
    confirmed: "not confirmed from a stored copy",
  },
  lambdaX86GbSecond: {
    usd: 0.0000166667,
    unit: "Lambda GB-second, x86_64 (not used by the stack; for comparison)",
    url: "https://aws.amazon.com/lambda/pricing/",
    confirmed: "not confirmed from a stored copy",
  },
  eventBridgeCustomEvent: {
    usd: 1.0 / 1e6,
    unit: "EventBridge custom event put (64 KB chunk of a PutEvents entry)",
    url: "https://aws.amazon.com/eventbridge/pricing/",
    confirmed: "not confirmed from a stored copy",
  },
  logsIngestedGb: {
    usd: 0.5,
    unit: "CloudWatch Logs GB ingested (Standard log class)",
    url: "https://aws.amazon.com/cloudwatch/pricing/",
    confirmed: "not confirmed from a stored copy",
  },
  sfnStandardTransition: {
    usd: 0.025 / 1000,
    unit: "Step Functions Standard state transition",
    url: "https://aws.amazon.com/step-functions/pricing/",
    confirmed: "$25 per million (issue 15 and the pricing page); not confirmed from a stored copy",
  },
  sfnExpressRequest: {
    usd: 1.0 / 1e6,
    unit: "Step Functions Express execution (request)",
    url: "https://aws.amazon.com/step-functions/pricing/",
    confirmed: "not confirmed from a stored copy",
  },
  sfnExpressGbSecond: {
    usd: 0.00001667,
    unit: "Step Functions Express GB-second (64 MB steps), first 1,000 h GB",
    url: "https://aws.amazon.com/step-functions/pricing/",
    confirmed: "not confirmed from a stored copy",
  },
  mwaaSmallHour: {
    usd: 0.49,
    unit: "MWAA mw1.small environment hour (the smallest class whose price could be confirmed; mw1.micro exists, its price was not found)",
    url: "https://aws.amazon.com/managed-workflows-for-apache-airflow/pricing/",
    confirmed: "~$0.49/h from a third-party copy (c3x.dev); mw1.micro's price not confirmed",
  },
} as const satisfies Record<string, Price>;

/** Hours in AWS's billing month. */
export const HOURS_PER_MONTH = 730;

/** Metered usage of a run, for its tasks (not their own compute). */
export interface Usage {
  tasks: number;
  writeUnits: number;
  readUnits: number;
  sqsStandardRequests: number;
  sqsFifoRequests: number;
  lambdaInvocations: number;
  /** Handler GB-seconds at the stack's memory sizes, task compute left out. */
  lambdaGbSeconds: number;
  eventEntries: number;
  logBytes: number;
}

/** USD by driver and in all, of `usage`. */
export function priceUsage(u: Usage): Record<string, number> & { total: number } {
  const parts = {
    dynamoWrites: u.writeUnits * PRICES.dynamoWriteRequestUnit.usd,
    dynamoReads: u.readUnits * PRICES.dynamoReadRequestUnit.usd,
    sqs:
      u.sqsStandardRequests * PRICES.sqsStandardRequest.usd +
      u.sqsFifoRequests * PRICES.sqsFifoRequest.usd,
    lambdaRequests: u.lambdaInvocations * PRICES.lambdaRequest.usd,
    lambdaDuration: u.lambdaGbSeconds * PRICES.lambdaArmGbSecond.usd,
    events: u.eventEntries * PRICES.eventBridgeCustomEvent.usd,
    logs: (u.logBytes / 2 ** 30) * PRICES.logsIngestedGb.usd,
  };
  return { ...parts, total: Object.values(parts).reduce((a, b) => a + b, 0) };
}

/** USD per million tasks of what `usage` cost. */
export function perMillionTasks(usage: Usage): Record<string, number> & { total: number } {
  const p = priceUsage(usage);
  const k = 1e6 / Math.max(1, usage.tasks);
  return Object.fromEntries(Object.entries(p).map(([key, v]) => [key, v * k])) as Record<
    string,
    number
  > & { total: number };
}

/** A DAG's shape as Step Functions would run it. */
export interface SfnShape {
  tasks: number;
  /** Fan-outs expressed as Map or Parallel states (each adds its own transitions). */
  fanOuts: number;
}

/**
 * State transitions of one Step Functions execution of the DAG: one Task state per task, and for
 * each fan-out a Map/Parallel state (entered and left: 2 transitions), plus the execution's start
 * and end (2). A Standard workflow bills every transition.
 */
export function sfnTransitions(s: SfnShape): number {
  return s.tasks + 2 * s.fanOuts + 2;
}

/** Step Functions Standard, USD per million tasks of the DAG. */
export function sfnStandardPerMillion(s: SfnShape): number {
  return (sfnTransitions(s) * PRICES.sfnStandardTransition.usd * 1e6) / s.tasks;
}

/**
 * Step Functions Express, USD per million tasks: one execution per DAG (a request) and its
 * duration at the smallest memory step (64 MB) for `seconds` of orchestration, tasks' own
 * compute left out (Express bills its duration; the tasks run elsewhere).
 */
export function sfnExpressPerMillion(s: SfnShape, seconds: number): number {
  const usd = PRICES.sfnExpressRequest.usd + seconds * (64 / 1024) * PRICES.sfnExpressGbSecond.usd;
  return (usd * 1e6) / s.tasks;
}

/** MWAA's fixed monthly floor (smallest confirmed environment, always on), USD. */
export const mwaaMonthlyFloor = (): number => PRICES.mwaaSmallHour.usd * HOURS_PER_MONTH;

/**
 * Structured logs: one JSON line per event on stderr, `{"time": ISO-8601, "msg": …, …fields}`
 * (CloudWatch Logs on Lambda parses JSON lines). Written through Powertools for AWS Lambda's
 * Logger, with a formatter that keeps Shoal's line shape: no level, service or sampling keys,
 * and fields as given (empty strings and nulls included).
 *
 * Powertools' own settings still apply: `AWS_LAMBDA_LOG_LEVEL` (Lambda's advanced logging
 * controls) above INFO drops these lines, and fields named `level`, `message`, `service`,
 * `timestamp` or `sampling_rate` are reserved (Powertools drops them with a warning): name
 * fields otherwise.
 */
import { LogFormatter, Logger, LogItem } from "@aws-lambda-powertools/logger";
import type { LogAttributes, UnformattedAttributes } from "@aws-lambda-powertools/logger/types";

/** What the engine, API and pollers log with: a message and its fields. */
export type Log = (msg: string, fields?: Record<string, unknown>) => void;

/** `{time, msg, ...fields}`: the shape of Shoal's log lines. */
class ShoalLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    return new LogItem({
      attributes: {
        time: attributes.timestamp.toISOString(),
        msg: attributes.message,
        ...additional,
      },
    });
  }
}

/** Prints each line on stderr, as it is (Powertools prints INFO on stdout, dropping empty keys). */
class StderrLogger extends Logger {
  protected override printLog(_logLevel: number, log: LogItem): void {
    process.stderr.write(`${JSON.stringify(log.getAttributes(), this.getJsonReplacer())}\n`);
  }
}

/**
 * A log function for one process.
 * @param opts.quiet logs nothing (SHOAL_QUIET: tests, benchmarks, quiet standalone children).
 */
export function createLog(opts: { quiet: boolean }): Log {
  // Quiet means silent whatever AWS_LAMBDA_LOG_LEVEL says (it overrides Powertools' logLevel).
  if (opts.quiet) return () => {};
  const logger = new StderrLogger({
    logLevel: "INFO",
    logFormatter: new ShoalLogFormatter(),
  });
  return (msg, fields = {}) => logger.info(msg, fields);
}

/**
 * Where an attempt's log lives in CloudWatch Logs: its log stream name, and the console link to
 * that stream (task responses' `logUrl`).
 */
import { createHash } from "node:crypto";
import { logName, type TaskLogKey } from "./task-log.js";

/** CreateLogStream: stream names are 1..512 characters. */
const MAX_STREAM_NAME = 512;
/**
 * `<workflow>/<instanceId>/<taskCode>/<attempt>` as a log stream name. Stream names may not
 * contain ':' or '*' (CreateLogStream), so those (and '%', to stay reversible) are
 * percent-encoded; validated names never contain them. A name past 512 characters (not
 * reachable with validated names either) is cut and suffixed with a hash to stay unique.
 */
export function logStreamName(key: TaskLogKey): string {
  const name = logName(key).replace(
    /[%:*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  if (name.length <= MAX_STREAM_NAME) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 16);
  return `${name.slice(0, MAX_STREAM_NAME - hash.length - 1)}~${hash}`;
}

/**
 * The CloudWatch console URL of one attempt's stream in `region`. The console's fragment takes
 * names URI-encoded twice with '%' written as '$' ('/' becomes `$252F`), as its own links do.
 */
export function logUrl(key: TaskLogKey, where: { region: string; logGroupName: string }): string {
  const consoleEncode = (s: string) => encodeURIComponent(encodeURIComponent(s)).replace(/%/g, "$");
  const region = encodeURIComponent(where.region);
  return (
    `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}` +
    `#logsV2:log-groups/log-group/${consoleEncode(where.logGroupName)}` +
    `/log-events/${consoleEncode(logStreamName(key))}`
  );
}

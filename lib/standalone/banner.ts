/** What `shoal standalone` prints once it is up (lib/standalone/standalone.ts). */
import { isAbsolute, relative, resolve } from "node:path";
import { VERSION } from "../version.js";
import { DEFAULT_ENDPOINT } from "./defaults.js";

/** A path as a shell word: as it is when that is safe, else in single quotes. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

/**
 * What standalone prints when it is up: where everything is, and the exact commands to add a
 * worker (or a sweeper) and to try an example, `--data-dir` and `--endpoint` included when they
 * are not the defaults (`.shoal` in the current directory, port 8080).
 */
export function banner(b: {
  apiUrl: string;
  dataDir: string;
  envFile: string;
  workers: number;
  scheduler: boolean;
  retentionDays: number;
  examples: string[];
  cwd: string;
  /** The secrets file in use, if any. */
  secretsFile?: string;
  /** Where state is kept (default `embedded`). */
  backend?: "embedded" | "emulators";
  /** The other backend, when the data dir holds only its data (storage-backend.ts). */
  otherBackend?: "embedded" | "emulators";
  /** `--no-triggers`: how many triggers it set OFFLINE. */
  triggersOffline?: number;
}): string {
  const inCwd = relative(b.cwd, b.dataDir);
  const dirArg =
    b.dataDir === resolve(b.cwd, ".shoal")
      ? ""
      : ` --data-dir ${shellWord(inCwd && !inCwd.startsWith("..") && !isAbsolute(inCwd) ? inCwd : b.dataDir)}`;
  const endpointArg = b.apiUrl === DEFAULT_ENDPOINT ? "" : ` --endpoint ${b.apiUrl}`;
  return [
    `Shoal ${VERSION} standalone`,
    `  console   ${b.apiUrl}/`,
    `  API       ${b.apiUrl}`,
    `  data      ${b.dataDir}`,
    (b.backend ?? "embedded") === "embedded"
      ? "  storage   embedded: DynamoDB and SQS in this process, on SQLite (--backend emulators: dynalite and fauxqs)"
      : "  storage   emulators: dynalite and fauxqs child processes (--backend embedded: in-process, faster)",
    ...(b.otherBackend
      ? [
          `  note      ${b.dataDir} holds the data of the ${b.otherBackend} backend, which this run does not read: restart with --backend ${b.otherBackend} to see those workflows and instances`,
        ]
      : []),
    `  workers   ${b.workers} task slot${b.workers === 1 ? "" : "s"} (worker group 'default')`,
    `            ${b.workers > 0 ? "more" : "start one"}: npx shoal worker${dirArg} --group default   (--group G serves worker group G)`,
    ...(b.scheduler ? [] : [`  sweeper   none here (--no-scheduler): npx shoal sweeper${dirArg}`]),
    b.retentionDays > 0
      ? `  retention ${b.retentionDays} day${b.retentionDays === 1 ? "" : "s"} (finished instances, their logs and work directories; --retention-days)`
      : "  retention everything kept (--keep-all)",
    `  env file  ${b.envFile} (read by 'shoal worker${dirArg}' and 'shoal sweeper${dirArg}')`,
    ...(b.secretsFile ? [`  secrets   ${b.secretsFile} (and SHOAL_SECRET_* variables)`] : []),
    ...(b.triggersOffline !== undefined
      ? [
          `  triggers  all OFFLINE (--no-triggers; ${b.triggersOffline} ${b.triggersOffline === 1 ? "was" : "were"} online): npx shoal triggers${endpointArg}, then npx shoal trigger online ID${endpointArg}`,
        ]
      : []),
    ...(b.examples.length ? [`  examples  ${b.examples.join(", ")}`] : []),
    "",
    ...(b.examples.some((e) => e.startsWith("etl-report "))
      ? [`Try:  npx shoal run etl-report --wait${endpointArg}`, ""]
      : []),
    "",
  ].join("\n");
}

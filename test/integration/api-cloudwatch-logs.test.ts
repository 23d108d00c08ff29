/**
 * The API over CloudWatch Logs task logs (as on AWS): task responses carry a `logUrl` to the
 * attempt's stream in the CloudWatch console, and the log endpoint pages with GetLogEvents
 * (captured with aws-sdk-client-mock); a finished task's last page has no `nextToken`, so
 * `shoal logs --follow` stops. Logic tasks, which write no log, get no link.
 */
import {
  CloudWatchLogsClient,
  GetLogEventsCommand,
  type GetLogEventsCommandInput,
} from "@aws-sdk/client-cloudwatch-logs";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli/main.js";
import { CloudWatchTaskLogs } from "../../lib/logs/cloudwatch-task-log.js";
import {
  apiServer,
  createWorkflow,
  get,
  oneTask,
  startApiServer,
  startRun,
  stopApiServer,
} from "../helpers/api-client.js";
import { runToSuccess } from "../helpers/api-engine.js";

const cw = mockClient(CloudWatchLogsClient);

beforeAll(async () => {
  await startApiServer();
  apiServer().rt.api.logs = new CloudWatchTaskLogs({
    logGroupName: "/shoal/tasks",
    region: "eu-west-1",
    client: () => new CloudWatchLogsClient({ region: "eu-west-1" }),
  });
});
afterAll(async () => {
  cw.restore();
  await stopApiServer();
});

describe("task logs on CloudWatch Logs through the API", () => {
  let id: string;
  beforeAll(async () => {
    await createWorkflow("cwlogs", oneTask("echo from-cloudwatch"));
    id = await startRun("cwlogs");
    await runToSuccess(id);
  });

  it("task responses link to the attempt's stream in the CloudWatch console", async () => {
    const inst = await get(`/v1/instances/${id}`);
    expect(inst.status).toBe(200);
    const url = inst.body.tasks[0].logUrl as string;
    expect(url).toBe(
      "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1" +
        `#logsV2:log-groups/log-group/$252Fshoal$252Ftasks/log-events/cwlogs$252F${id}$252Fonly$252F1`,
    );
    const attempts = await get(`/v1/instances/${id}/tasks/only/attempts`);
    expect(attempts.body.items[0].logUrl).toBe(url);
  });

  it("pages with GetLogEvents; the finished task's last page ends the log (CLI --follow stops)", async () => {
    const inputs: GetLogEventsCommandInput[] = [];
    cw.on(GetLogEventsCommand).callsFake((input: GetLogEventsCommandInput) => {
      inputs.push(input);
      return {
        events: input.nextToken
          ? []
          : [
              { timestamp: Date.UTC(2026, 10, 21, 8, 0, 0), message: "from-cloudwatch" },
              { timestamp: Date.UTC(2026, 10, 21, 8, 0, 1), message: "done" },
            ],
        nextForwardToken: "f/2",
        nextBackwardToken: "b/0",
      };
    });
    const page = await get(`/v1/instances/${id}/tasks/only/log`);
    expect(page.status, page.text).toBe(200);
    expect(page.body.lines.map((l: { message: string }) => l.message)).toEqual([
      "from-cloudwatch",
      "done",
    ]);
    expect(page.body.nextToken).toBeUndefined();
    expect(inputs[0]).toMatchObject({
      logGroupName: "/shoal/tasks",
      logStreamName: `cwlogs/${id}/only/1`,
      startFromHead: true,
    });

    const out: string[] = [];
    const io = {
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => out.push(s) },
    };
    const code = await main(["--endpoint", apiServer().base, "logs", id, "only", "--follow"], io);
    expect(code).toBe(0);
    expect(out.join("")).toBe(
      "2026-11-21T08:00:00.000Z from-cloudwatch\n2026-11-21T08:00:01.000Z done\n",
    );
  });
});

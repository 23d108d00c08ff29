/**
 * `shoal render TARGET TASK` (Airflow's `tasks render`): prints a task's resolved parameters and
 * what it would run (the SHELL command, HTTP request, LAMBDA payload, STEP_FUNCTIONS input) or
 * decide (SWITCH cases, DEPENDENT periods), without running anything.
 *
 * TARGET is an instance id or a workflow name. A TARGET shaped like an instance id (a UUID) is
 * looked up as an instance first, then as a workflow of that name; anything else is a workflow
 * name. The workflow-only options (-p, --schedule-time, --timezone, --version) ask for a workflow
 * rendering; --attempt asks for an instance's.
 */
import { type Command, InvalidArgumentError } from "commander";
import { renderingLines, type TaskRendering } from "../../tasks/render-task.js";
import type { CliContext } from "../context.js";
import { EXIT, UsageError } from "../errors.js";
import { ApiError, type FlagMap, seg } from "../http.js";
import { intIn, keyValue, outputOption } from "../options.js";

/** What the render endpoints answer (lib/api/render.ts). */
export interface RenderAnswer extends TaskRendering {
  instanceId?: string;
  workflow: string;
  version: number;
  task: string;
  attempt: number;
  baseTime: string;
  timezone: string;
}

interface RenderOptions {
  param?: Record<string, string>;
  scheduleTime?: string;
  timezone?: string;
  version?: number;
  attempt?: number;
  output: "TEXT" | "JSON";
}

/** Fields of the workflow render request (lib/api/render.ts renderSchema) and their flags. */
const RENDER_FLAGS: FlagMap = {
  params: "--param",
  scheduleTime: "--schedule-time",
  timezone: "--timezone",
  version: "--version",
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/** `--schedule-time`: an ISO-8601 instant with its zone, sent as the API's UTC form. */
function instant(value: string): string {
  const t = Date.parse(value);
  if (!ISO_INSTANT.test(value.trim()) || Number.isNaN(t)) {
    throw new InvalidArgumentError(
      "must be an ISO-8601 instant with a zone, e.g. 2026-11-02T00:30:00+01:00.",
    );
  }
  return new Date(t).toISOString();
}

/** Registers `render`. */
export function registerRender(program: Command, ctx: CliContext): void {
  program
    .command("render")
    .description(
      "print a task's resolved parameters and what it would run, without running it (an instance's task as it ran or would run, or a workflow's task as a new run would)",
    )
    .argument("<target>", "instance id, or workflow name")
    .argument("<task>", "task code")
    .option("-p, --param <key=value>", "workflow: run parameter (repeatable)", keyValue)
    .option(
      "--schedule-time <iso>",
      "workflow: base time of the time parameters, as a schedule's nominal time (default: now)",
      instant,
    )
    .option(
      "--timezone <zone>",
      "workflow: IANA zone of the time parameters (default: the workflow's, else UTC)",
    )
    .option("--version <n>", "workflow: definition version (default: the latest)", intIn(1, 1e9))
    .option("--attempt <n>", "instance: attempt number (default: the current one)", intIn(1, 1000))
    .addOption(outputOption(["TEXT", "JSON"]))
    .action(async (target: string, task: string, opts: RenderOptions) => {
      const workflowOnly =
        opts.param !== undefined ||
        opts.scheduleTime !== undefined ||
        opts.timezone !== undefined ||
        opts.version !== undefined;
      if (workflowOnly && opts.attempt !== undefined) {
        throw new UsageError(
          "--attempt renders an instance's task; -p, --schedule-time, --timezone and --version render a workflow's: not both",
        );
      }
      let answer: RenderAnswer | undefined;
      if (!workflowOnly && UUID.test(target)) {
        answer = await renderInstance(ctx, target, task, opts.attempt);
        if (!answer && opts.attempt !== undefined) {
          throw new ApiError(404, "NotFound", `instance '${target}' does not exist`, []);
        }
      } else if (opts.attempt !== undefined) {
        throw new UsageError(`--attempt needs an instance id; '${target}' is not one`);
      }
      answer ??= await renderWorkflow(ctx, target, task, opts, UUID.test(target));
      if (opts.output === "JSON") ctx.out(JSON.stringify(answer, null, 2));
      else for (const line of describe(answer)) ctx.out(line);
      // The task could not be rendered: a run would fail the same way.
      if (answer.error) ctx.exitCode = EXIT.error;
    });
}

/** The instance's rendering; undefined when there is no such instance. */
async function renderInstance(
  ctx: CliContext,
  id: string,
  task: string,
  attempt: number | undefined,
): Promise<RenderAnswer | undefined> {
  try {
    return await ctx
      .api()
      .get<RenderAnswer>(`/v1/instances/${seg(id)}/tasks/${seg(task)}/render`, { attempt });
  } catch (err) {
    // Not an instance (or an instance without that task): try it as a workflow name.
    if (err instanceof ApiError && err.status === 404 && /^instance /.test(err.message)) {
      return undefined;
    }
    throw err;
  }
}

async function renderWorkflow(
  ctx: CliContext,
  name: string,
  task: string,
  opts: RenderOptions,
  triedInstance: boolean,
): Promise<RenderAnswer> {
  const body: Record<string, unknown> = {};
  if (opts.param) body.params = opts.param;
  if (opts.scheduleTime) body.scheduleTime = opts.scheduleTime;
  if (opts.timezone) body.timezone = opts.timezone;
  if (opts.version !== undefined) body.version = opts.version;
  try {
    const res = await ctx
      .api()
      .post<RenderAnswer>(
        `/v1/workflows/${seg(name)}/tasks/${seg(task)}/render`,
        body,
        RENDER_FLAGS,
      );
    return res.body;
  } catch (err) {
    if (
      triedInstance &&
      err instanceof ApiError &&
      err.status === 404 &&
      /^workflow /.test(err.message)
    ) {
      throw new ApiError(
        404,
        "NotFound",
        `'${name}' is neither an instance nor a workflow`,
        err.details,
      );
    }
    throw err;
  }
}

/** The heading lines, then the rendering's own. */
function describe(a: RenderAnswer): string[] {
  const where = a.instanceId
    ? `instance ${a.instanceId} (workflow ${a.workflow} v${a.version}), attempt ${a.attempt}`
    : `workflow ${a.workflow} v${a.version} (a new run)`;
  return [
    `task ${a.task} (${a.type}) of ${where}`,
    `base time ${a.baseTime}, time zone ${a.timezone}`,
    ...renderingLines(a),
  ];
}

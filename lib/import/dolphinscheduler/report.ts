/**
 * The files `shoal import dolphinscheduler --output DIR` writes, as text: one YAML definition
 * per workflow (for `shoal apply -f`), `schedules.sh` (the schedules, as `shoal schedule create`
 * commands, alert rules with `--alerts`: `shoal apply` takes workflow definitions only) and
 * `import-report.md`. Pure.
 */
import { stringify } from "yaml";
import { yamlSchemaCommentLines } from "../../workflow-schema-url.js";
import type { ConvertedWorkflow, DsConversion } from "./convert.js";
import type { ImportNote, NoteKind } from "./notes.js";

/** One file to write, relative to the output directory. */
export interface OutputFile {
  path: string;
  content: string;
}

/**
 * The YAML document of one workflow: the schema modeline editors read (lib/workflow-schema-url.ts),
 * a comment naming its origin, then `name` and the definition.
 */
export function workflowYaml(wf: ConvertedWorkflow): string {
  const head = [
    ...yamlSchemaCommentLines(),
    `# Imported from DolphinScheduler workflow ${JSON.stringify(wf.dsName)} (code ${wf.dsCode}, project ${wf.projectCode}${wf.source ? `, file ${wf.source}` : ""})`,
    "# by `shoal import dolphinscheduler`; see import-report.md. Apply with: shoal apply -f FILE",
  ];
  if (wf.schedule) head.push("# Its schedule is in schedules.sh (run it after applying).");
  return `${head.join("\n")}\n${stringify({ name: wf.name, ...wf.definition }, { lineWidth: 0 })}`;
}

/** A word or value for a POSIX shell command line, single-quoted when it needs quoting. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** Flags of `shoal schedule create` for a schedule body's fields (lib/cli/schedule-options.ts). */
const FLAGS: Array<[string, string]> = [
  ["cron", "--cron"],
  ["timezone", "--timezone"],
  ["startTime", "--start"],
  ["endTime", "--end"],
  ["priority", "--priority"],
  ["failureStrategy", "--failure-strategy"],
  ["workerGroup", "--worker-group"],
  ["overlapPolicy", "--overlap"],
];

/**
 * The `shoal schedule create` command that creates `body`; its alert rules go as
 * `--alerts '<JSON>'`.
 */
export function scheduleCommand(body: Record<string, unknown>): string {
  const words = ["shoal", "schedule", "create", shellWord(String(body.workflow))];
  for (const [field, flag] of FLAGS) {
    if (body[field] !== undefined) words.push(flag, shellWord(String(body[field])));
  }
  if (Array.isArray(body.alerts) && body.alerts.length > 0)
    words.push("--alerts", shellWord(JSON.stringify(body.alerts)));
  if (body.state === "OFFLINE") words.push("--offline");
  return words.join(" ");
}

/**
 * The lines of "To do before running" for the alert groups the schedules name: each group is a
 * channel to configure, and a snippet of standalone's alerts file (docs/alerts.md) with them.
 */
export function alertGroupLines(groups: DsConversion["alertGroups"]): string[] {
  if (groups.length === 0) return [];
  const lines = groups.map(
    (g) =>
      `- alert group ${g.id} (the schedule${g.workflows.length === 1 ? "" : "s"} of ${g.workflows.map((w) => `\`${w}\``).join(", ")}): configure the alert channel \`${g.channel}\` with the receiver of DolphinScheduler's alert group ${g.id} (its webhook, Slack or e-mail), or rename it in the schedule's \`alerts\` to a channel you have. Until it is configured, each of its alerts is a FAILED delivery saying the channel is not configured.`,
  );
  return [
    ...lines,
    "",
    "  In standalone, the alerts file (`shoal standalone --alerts alerts.yaml`; on AWS the `Shoal` construct's `alerts.channels`):",
    "",
    "  ```yaml",
    "  channels:",
    ...groups.flatMap((g) => [
      `    ${g.channel}:`,
      "      type: webhook        # or slack (an incoming webhook); email needs AWS",
      `      url: https://alerts.example.com/replace-me   # the receiver of alert group ${g.id}`,
    ]),
    "  ```",
  ];
}

/** schedules.sh: one `shoal schedule create` per schedule. */
export function schedulesScript(workflows: readonly ConvertedWorkflow[]): string | undefined {
  const withSchedule = workflows.filter((w) => w.schedule);
  if (withSchedule.length === 0) return undefined;
  const lines = [
    "#!/bin/sh",
    "# Schedules of the workflows imported from DolphinScheduler, for after `shoal apply -f` of",
    "# the workflow files. DolphinScheduler exports schedules OFFLINE: each is created OFFLINE;",
    "# start it with `shoal schedule online ID` (each command prints the id first).",
    "set -e",
    "# shoal from the PATH, else the project's installed package through npx; --no-install:",
    "# never fetch a package of that name from the registry.",
    'command -v shoal >/dev/null 2>&1 || shoal() { npx --no-install shoal "$@"; }',
    ...withSchedule.map((w) => scheduleCommand(w.schedule as Record<string, unknown>)),
  ];
  return `${lines.join("\n")}\n`;
}

const KIND_TITLES: Record<NoteKind, string> = {
  unsupported: "Unsupported task types",
  external: "References to workflows outside the file",
  action: "To do before running",
  approximated: "Approximated",
  "not-converted": "Not converted",
};

/** A section's title; with several files, external references are outside all of them. */
function kindTitle(kind: NoteKind, c: DsConversion): string {
  return kind === "external" && c.sources
    ? "References to workflows outside the imported files"
    : KIND_TITLES[kind];
}

function noteLine(n: ImportNote): string {
  return `- \`${n.workflow}\`${n.task ? ` / \`${n.task}\`` : ""}: ${n.message}`;
}

/**
 * import-report.md. `source`: the export file's name (the files' names, comma-separated, when
 * several were imported together: then the workflows table says which file each came from).
 */
export function reportMarkdown(c: DsConversion, source: string): string {
  const out: string[] = [`# DolphinScheduler import report: ${source}`, ""];
  const taskCount = c.workflows.reduce(
    (n, w) => n + Object.values(w.taskTypes).reduce((a, b) => a + b, 0),
    0,
  );
  out.push(
    `${c.workflows.length} workflow${c.workflows.length === 1 ? "" : "s"}, ${taskCount} tasks, key spelling ${c.spellings.join(" and ")} (DolphinScheduler ${c.spellings.map((s) => (s === "3.3" ? "3.3+" : s)).join(", ")}).`,
  );
  if (c.sources) {
    out.push(
      `${c.sources.length} files imported together (${c.sources.join(", ")}): a DEPENDENT or sub-workflow task on a workflow of any of them names its Shoal workflow; only references to none of them are listed as outside.`,
    );
  }
  const inputs = c.sources ? "files" : "file";
  if (c.projects.length > 1 || c.project !== undefined) {
    const list = c.projects
      .map((p) => `${p.code}${p.name ? ` (${p.name})` : ""}: ${p.workflows}`)
      .join(", ");
    out.push(
      c.project !== undefined
        ? `Projects in the ${inputs}: ${list}; imported: project ${c.project} only.`
        : `Projects in the ${inputs}: ${list}; all were imported (choose one with --project).`,
    );
  }
  const file = c.sources ? " File |" : "";
  out.push(
    "",
    "## Workflows",
    "",
    `| Shoal name | DolphinScheduler name | Tasks | Schedule |${file}`,
    `| --- | --- | --- | --- |${file && " --- |"}`,
  );
  const files = fileNames(c.workflows);
  for (const w of c.workflows) {
    const types = Object.entries(w.taskTypes)
      .map(([t, n]) => `${n} ${t}`)
      .join(", ");
    const sched = w.schedule
      ? `\`${String(w.schedule.cron)}\` ${String(w.schedule.timezone ?? "")}`.trim()
      : "—";
    const from = c.sources ? ` ${String(w.source).replace(/\|/g, "\\|")} |` : "";
    out.push(`| \`${w.name}\` | ${w.dsName.replace(/\|/g, "\\|")} | ${types} | ${sched} |${from}`);
  }
  const renamedFiles = c.workflows.filter((w) => files.get(w.name) !== `${w.name}.yaml`);
  if (renamedFiles.length > 0) {
    out.push(
      "",
      ...renamedFiles.map((w) => {
        const other = c.workflows.find(
          (o) => o !== w && o.name.toLowerCase() === w.name.toLowerCase(),
        );
        return `\`${w.name}\` is written to \`${files.get(w.name)}\`: its name differs from ${other ? `\`${other.name}\`'s` : "another file's"} only by case, and on a case-insensitive file system (macOS, Windows) the two files would be one. The workflow keeps its name.`;
      }),
    );
  }
  const taskNames = c.workflows.flatMap((w) =>
    ((w.definition.tasks as Array<{ code: string; displayName?: string }>) ?? [])
      .filter((t) => t.displayName !== undefined)
      .map(
        (t) => `| \`${w.name}\` | \`${t.code}\` | ${String(t.displayName).replace(/\|/g, "\\|")} |`,
      ),
  );
  if (taskNames.length > 0) {
    out.push(
      "",
      "## Renamed tasks",
      "",
      "| Workflow | Shoal code | DolphinScheduler name (displayName) |",
      "| --- | --- | --- |",
      ...taskNames,
    );
  }
  for (const kind of [
    "unsupported",
    "external",
    "action",
    "approximated",
    "not-converted",
  ] as NoteKind[]) {
    const notes = c.notes.filter((n) => n.kind === kind);
    const extra = kind === "action" ? alertGroupLines(c.alertGroups) : [];
    if (notes.length === 0 && extra.length === 0) continue;
    out.push("", `## ${kindTitle(kind, c)}`, "", ...notes.map(noteLine), ...extra);
  }
  const script = c.workflows.some((w) => w.schedule);
  out.push(
    "",
    "## Next steps",
    "",
    "1. Review the YAML files, then apply them, sub-workflows first (or re-run the import with `--apply`):",
    "",
    ...(c.cycles ?? []).map(
      (cycle) =>
        `   First break the sub-workflow cycle ${cycle.map((n) => `\`${n}\``).join(" → ")} (see "Not converted"): until then these commands fail.\n`,
    ),
    "   ```sh",
    ...applyOrder(c.workflows).map(
      (name) => `   shoal apply -f ${shellWord(files.get(name) ?? `${name}.yaml`)}`,
    ),
    "   ```",
    ...(script
      ? [
          "",
          "2. Create the schedules: `sh schedules.sh` (they are created OFFLINE, as DolphinScheduler exports them).",
        ]
      : []),
  );
  return `${out.join("\n")}\n`;
}

/**
 * Workflow names in an order to apply them: each after the workflows of the file its
 * SUB_WORKFLOW tasks run (the API refuses a SUB_WORKFLOW whose workflow does not exist yet),
 * otherwise in file order. A cycle (which the API would refuse anyway) keeps file order.
 */
export function applyOrder(workflows: readonly ConvertedWorkflow[]): string[] {
  const names = new Set(workflows.map((w) => w.name));
  const children = new Map(
    workflows.map((w) => [
      w.name,
      (w.definition.tasks as Array<{ type: string; workflow?: string }>)
        .filter(
          (t) => t.type === "SUB_WORKFLOW" && t.workflow !== undefined && names.has(t.workflow),
        )
        .map((t) => t.workflow as string),
    ]),
  );
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const child of children.get(name) ?? []) visit(child);
    order.push(name);
  };
  for (const w of workflows) visit(w.name);
  return order;
}

/**
 * The YAML file name of each workflow (by Shoal name): `<name>.yaml`, unless another file of the
 * import already has that name in another case (`Orders` / `orders`: Shoal names are
 * case-sensitive, macOS's and Windows's file systems are not, and the second file would
 * overwrite the first), then `<name>-2.yaml` (`-3`, … until unique ignoring case).
 */
export function fileNames(workflows: readonly ConvertedWorkflow[]): Map<string, string> {
  const taken = new Set<string>(["schedules.sh", "import-report.md"]);
  const out = new Map<string, string>();
  for (const w of workflows) {
    let file = `${w.name}.yaml`;
    for (let n = 2; taken.has(file.toLowerCase()); n++) file = `${w.name}-${n}.yaml`;
    taken.add(file.toLowerCase());
    out.set(w.name, file);
  }
  return out;
}

/** Every file of `--output DIR`. */
export function outputFiles(c: DsConversion, source: string): OutputFile[] {
  const names = fileNames(c.workflows);
  const files: OutputFile[] = c.workflows.map((w) => ({
    path: names.get(w.name) as string,
    content: workflowYaml(w),
  }));
  const script = schedulesScript(c.workflows);
  if (script) files.push({ path: "schedules.sh", content: script });
  files.push({ path: "import-report.md", content: reportMarkdown(c, source) });
  return files;
}

/** What the importer tells the user about a conversion: the lines of import-report.md. */

/**
 * - `approximated`: converted, but Shoal behaves differently (the note says how);
 * - `not-converted`: a setting with no Shoal equivalent, left out;
 * - `external`: a reference to a workflow that is not in the file (DEPENDENT, SUB_PROCESS);
 * - `unsupported`: a task type with no Shoal equivalent;
 * - `action`: something to do before or after applying (create a task group, a schedule).
 */
export type NoteKind = "approximated" | "not-converted" | "external" | "unsupported" | "action";

/** One note about one workflow (and task), with DolphinScheduler's names. */
export interface ImportNote {
  kind: NoteKind;
  /** The Shoal workflow name. */
  workflow: string;
  /** The Shoal task code, when the note is about a task. */
  task?: string;
  message: string;
  /** A plain-text credential (credentials.ts): `--apply` also prints it as a warning. */
  credential?: true;
}

/** Collects notes about one workflow. */
export class NoteBook {
  readonly notes: ImportNote[] = [];

  constructor(readonly workflow: string) {}

  add(kind: NoteKind, message: string, task?: string): void {
    this.notes.push({ kind, workflow: this.workflow, ...(task ? { task } : {}), message });
  }

  /** An `action` note about a plain-text credential. */
  addCredential(message: string, task?: string): void {
    this.notes.push({
      kind: "action",
      workflow: this.workflow,
      ...(task ? { task } : {}),
      message,
      credential: true,
    });
  }
}

/**
 * The side panel of one task of a workflow definition: its type, what it runs (the command,
 * URL, SQL, sub-workflow… every type-specific field), parameters, retries, timeout and
 * upstream tasks, as defined in the chosen version.
 */
import type { TaskDefinition } from "./types";

/** Fields shown in their own rows; every other field is the type's own and listed after them. */
const COMMON = new Set([
  "code",
  "displayName",
  "type",
  "description",
  "upstream",
  "params",
  "retries",
  "retryIntervalSeconds",
  "retryBackoff",
  "maxRetryIntervalSeconds",
  "timeoutSeconds",
  "timeoutStrategy",
  "priority",
  "workerGroup",
  "taskGroup",
  "taskGroupPriority",
]);

function show(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

export function TaskDefinitionPanel(props: {
  task: TaskDefinition;
  onChoose: (code: string) => void;
  onClose: () => void;
}) {
  const t = props.task;
  const own = Object.entries(t).filter(([k]) => !COMMON.has(k));
  const params = Object.entries(t.params ?? {});
  return (
    <aside className="panel task-definition" aria-label={`task ${t.code}`}>
      <header>
        <h2 className="mono">{t.code}</h2>
        <button type="button" onClick={props.onClose} aria-label="close the task panel">
          ✕
        </button>
      </header>
      {t.displayName ? (
        <p>
          <strong>{t.displayName}</strong>
        </p>
      ) : null}
      {t.description ? <p>{t.description}</p> : null}
      <dl className="facts">
        <dt>Type</dt>
        <dd>{t.type}</dd>
        {own.map(([k, v]) => (
          <FieldRow key={k} name={k} value={show(v)} />
        ))}
        <dt>Upstream</dt>
        <dd>
          {(t.upstream ?? []).length === 0
            ? "none (a start task)"
            : (t.upstream ?? []).map((u) => (
                <button
                  type="button"
                  key={u}
                  className="link mono"
                  onClick={() => props.onChoose(u)}
                >
                  {u}
                </button>
              ))}
        </dd>
        <dt>Retries</dt>
        <dd>
          {t.retries ?? 0}
          {t.retries
            ? ` every ${t.retryIntervalSeconds ?? 0} s (${t.retryBackoff ?? "FIXED"}${t.maxRetryIntervalSeconds ? `, at most ${t.maxRetryIntervalSeconds} s` : ""})`
            : ""}
        </dd>
        <dt>Timeout</dt>
        <dd>{t.timeoutSeconds ? `${t.timeoutSeconds} s, then ${t.timeoutStrategy}` : "none"}</dd>
        <dt>Priority</dt>
        <dd>{t.priority ?? "-"}</dd>
        <dt>Worker group</dt>
        <dd>{t.workerGroup ?? "default"}</dd>
        {t.taskGroup ? (
          <>
            <dt>Task group</dt>
            <dd>
              {t.taskGroup} (priority {t.taskGroupPriority ?? 0})
            </dd>
          </>
        ) : null}
      </dl>
      <h3>Parameters</h3>
      {params.length === 0 ? (
        <p className="empty">No parameters of its own.</p>
      ) : (
        <table className="list">
          <tbody>
            {params.map(([k, v]) => (
              <tr key={k}>
                <td className="mono">{k}</td>
                <td className="mono">{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </aside>
  );
}

function FieldRow({ name, value }: { name: string; value: string }) {
  return (
    <>
      <dt>{name}</dt>
      <dd>
        {value.includes("\n") || value.length > 60 ? <pre>{value}</pre> : <code>{value}</code>}
      </dd>
    </>
  );
}

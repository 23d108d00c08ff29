/**
 * A task's attempts as a keyboard-operable table: one row per attempt (number, state, worker,
 * exit code, duration), the chosen one marked current; Tab reaches the chosen row, the arrow keys
 * (and Home/End) move between attempts and choose, Enter or Space chooses the focused one.
 */
import { type KeyboardEvent, useRef } from "react";
import type { TaskInstance } from "../../api";
import { formatSpan } from "../format";
import { StateBadge } from "../StateBadge";

export function Attempts(props: {
  attempts: TaskInstance[];
  chosen: number | undefined;
  onChoose: (attempt: number | undefined) => void;
}) {
  const body = useRef<HTMLTableSectionElement>(null);
  const now = Date.now();
  const list = props.attempts;
  const move = (e: KeyboardEvent, index: number) => {
    let to = index;
    if (e.key === "ArrowDown") to = Math.min(list.length - 1, index + 1);
    else if (e.key === "ArrowUp") to = Math.max(0, index - 1);
    else if (e.key === "Home") to = 0;
    else if (e.key === "End") to = list.length - 1;
    else if (e.key !== "Enter" && e.key !== " ") return;
    e.preventDefault();
    const a = list[to];
    if (!a) return;
    props.onChoose(a.attempt);
    (body.current?.children[to] as HTMLElement | undefined)?.focus();
  };
  if (list.length === 0) return <p className="note">No attempt yet in this run.</p>;
  return (
    <table className="list attempts" aria-label="attempts">
      <thead>
        <tr>
          <th>#</th>
          <th>State</th>
          <th>Worker</th>
          <th>Exit</th>
          <th>Duration</th>
        </tr>
      </thead>
      <tbody ref={body}>
        {list.map((a, n) => {
          const chosen = a.attempt === props.chosen;
          return (
            <tr
              key={a.attempt}
              className={chosen ? "chosen" : ""}
              aria-current={chosen ? "true" : undefined}
              // Roving focus: only the chosen attempt is a Tab stop; arrows move inside.
              tabIndex={chosen ? 0 : -1}
              onClick={() => props.onChoose(a.attempt)}
              onKeyDown={(e) => move(e, n)}
            >
              <td>{a.attempt}</td>
              <td>
                <StateBadge state={a.state} />
              </td>
              <td className="mono">{a.worker ?? "-"}</td>
              <td>{a.exitCode ?? "-"}</td>
              <td>{formatSpan(a.startedAt, a.endedAt, now)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

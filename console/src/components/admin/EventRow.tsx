/** One event of standalone's bus as a table row: when, source, detail type, what it is about. */
import { Link } from "react-router";
import { formatInstant } from "../format";
import { type AnyState, StateBadge } from "../StateBadge";
import { Outcomes } from "./SendEventForm";
import type { TriggerOutcome } from "./types";

/** An event in EventBridge's envelope, as `GET /v1/events/recent` answers it. */
export type BusEvent = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * A row: time (the browser's zone), source, detail type, a summary of Shoal's own events (its
 * instance linked, the task, the state, the trigger that started it), the outcome of an event
 * sent from this page, and the detail JSON, expandable.
 */
export function EventRow(props: { event: BusEvent; outcomes?: TriggerOutcome[] }) {
  const e = props.event;
  const detail = (e.detail ?? {}) as Record<string, unknown>;
  const instanceId = str(detail.instanceId);
  const state = str(detail.state);
  const triggerId = str(detail.triggerId);
  const workflow = str(detail.workflow);
  const task = str(detail.taskCode);
  return (
    <tr>
      <td className="time">{formatInstant(str(e.time))}</td>
      <td className="mono">{str(e.source) ?? "-"}</td>
      <td>{str(e["detail-type"]) ?? "-"}</td>
      <td>
        <div className="about">
          {workflow ? <span>{workflow}</span> : null}
          {instanceId ? (
            <Link to={`/instances/${instanceId}${task ? `?task=${encodeURIComponent(task)}` : ""}`}>
              {instanceId.slice(0, 8)}
              {task ? ` / ${task}` : ""}
            </Link>
          ) : null}
          {state ? <StateBadge state={state as AnyState} /> : null}
          {triggerId ? (
            <span>
              started by trigger{" "}
              <Link to="/triggers" className="mono" title={triggerId}>
                {triggerId.slice(0, 8)}
              </Link>
            </span>
          ) : null}
          {props.outcomes ? <Outcomes outcomes={props.outcomes} /> : null}
        </div>
      </td>
      <td>
        <details>
          <summary>detail</summary>
          <pre className="json">{JSON.stringify(detail, null, 2)}</pre>
        </details>
      </td>
    </tr>
  );
}

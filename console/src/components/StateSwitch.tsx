/**
 * An ONLINE/OFFLINE switch (schedules, triggers): a button with role `switch` (Tab to it, Enter
 * or Space to flip it) that asks for a confirmation first, and shows a refusal as the API's
 * message next to it.
 */
import { ErrorNote } from "./ErrorNote";

export function StateSwitch(props: {
  online: boolean;
  /** The accessible name, e.g. "schedule 0b1c2d3e online". */
  label: string;
  /** The tooltip of each state. */
  titles: { online: string; offline: string };
  /** The confirmation's question; the flip happens only when it is answered yes. */
  question: string;
  pending: boolean;
  error: unknown;
  onFlip: () => void;
}) {
  const { online } = props;
  return (
    <span className="state-switch">
      <button
        type="button"
        role="switch"
        aria-checked={online}
        aria-label={props.label}
        className={online ? "switch on" : "switch off"}
        disabled={props.pending}
        title={online ? props.titles.online : props.titles.offline}
        onClick={() => {
          if (window.confirm(props.question)) props.onFlip();
        }}
      >
        <span className="knob" aria-hidden="true" />
        {online ? "ONLINE" : "OFFLINE"}
      </button>
      {props.error ? <ErrorNote error={props.error} /> : null}
    </span>
  );
}

/**
 * "Send an event": one PutEvents-shaped entry (source, detail-type, detail JSON) to
 * `POST /v1/events`, so a trigger can be tried from the console; the answer says which triggers
 * matched and the run each started, or why it started none.
 */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { api } from "../../api";
import { ErrorNote } from "../ErrorNote";
import type { PutEventsBody, PutEventsResult, TriggerOutcome } from "./types";

/** Parses the detail text as a JSON object (what EventBridge requires), naming what is wrong. */
function detailText(text: string): string {
  let v: unknown;
  try {
    v = JSON.parse(text || "{}");
  } catch (e) {
    throw new Error(`detail: not JSON (${(e as Error).message})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new Error("detail: must be a JSON object");
  return JSON.stringify(v);
}

/**
 * The form, prefilled with `source` and `detailType` when given (the Triggers page's "Test…").
 * `onSent` receives the event id and what it did to each matching trigger.
 */
export function SendEventForm(props: {
  source?: string;
  detailType?: string;
  onSent: (eventId: string, outcomes: TriggerOutcome[]) => void;
}) {
  const [source, setSource] = useState(props.source ?? "com.example.orders");
  const [detailType, setDetailType] = useState(props.detailType ?? "OrderPlaced");
  const [detail, setDetail] = useState('{\n  "id": "o-1"\n}');
  const send = useMutation({
    mutationFn: () => {
      const body: PutEventsBody = {
        Entries: [
          { Source: source.trim(), DetailType: detailType.trim(), Detail: detailText(detail) },
        ],
      };
      return api<PutEventsResult>("/v1/events", { method: "POST", body: JSON.stringify(body) });
    },
    onSuccess: (r) => {
      const e = r.Entries[0];
      if (e?.EventId) props.onSent(e.EventId, e.Triggers ?? []);
    },
  });
  const entry = send.data?.Entries[0];
  return (
    <form
      className="dialog admin-form wide"
      aria-label="send an event"
      onSubmit={(e) => {
        e.preventDefault();
        send.mutate();
      }}
    >
      <h2>Send an event</h2>
      <label>
        Source{" "}
        <input
          name="source"
          required
          maxLength={256}
          value={source}
          onChange={(e) => setSource(e.currentTarget.value)}
        />
      </label>
      <label>
        Detail type{" "}
        <input
          name="detailType"
          required
          maxLength={128}
          value={detailType}
          onChange={(e) => setDetailType(e.currentTarget.value)}
        />
      </label>
      <label>
        Detail (a JSON object)
        <textarea
          name="detail"
          rows={5}
          spellCheck={false}
          value={detail}
          onChange={(e) => setDetail(e.currentTarget.value)}
        />
      </label>
      {send.error ? <ErrorNote error={send.error} /> : null}
      <div className="controls">
        <button type="submit" disabled={send.isPending}>
          Send
        </button>
      </div>
      {entry && !send.error ? (
        <div className="sent" role="status">
          {entry.EventId ? (
            <>
              Sent event <span className="mono">{entry.EventId.slice(0, 8)}</span>.{" "}
              <Outcomes outcomes={entry.Triggers ?? []} />
            </>
          ) : (
            <span className="error">
              {entry.ErrorCode}: {entry.ErrorMessage}
            </span>
          )}
        </div>
      ) : null}
    </form>
  );
}

/** What an event did to the triggers it matched: runs started (linked) or why not. */
export function Outcomes({ outcomes }: { outcomes: TriggerOutcome[] }) {
  if (outcomes.length === 0) return <span className="note">It matched no trigger.</span>;
  return (
    <ul className="outcomes">
      {outcomes.map((o) => (
        <li key={o.triggerId}>
          trigger <span className="mono">{o.triggerId.slice(0, 8)}</span>{" "}
          {o.instanceId ? (
            <>
              started <Link to={`/instances/${o.instanceId}`}>{o.instanceId.slice(0, 8)}</Link>
            </>
          ) : (
            <>started nothing: {o.skipped ?? "no reason given"}</>
          )}
        </li>
      ))}
    </ul>
  );
}

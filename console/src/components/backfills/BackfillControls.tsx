/**
 * The controls a backfill's state allows (pause, resume, cancel), each after a confirmation; a
 * refusal (409) is shown as the API's message.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { Backfill } from "../../../../lib/cli/api-types.generated";
import { api } from "../../api";
import { ErrorNote } from "../ErrorNote";

/** Which verbs each state accepts (docs/api.md, `POST /v1/backfills/{id}/…`). */
const ACTIONS: Record<Backfill["state"], string[]> = {
  RUNNING: ["pause", "cancel"],
  PAUSED: ["resume", "cancel"],
  CANCELLED: [],
  SUCCESS: [],
  FAILURE: [],
};

const WHY: Record<string, string> = {
  pause: "Nothing new starts; running instances finish and are counted.",
  resume: "The next runs start at once.",
  cancel: "For good: nothing new starts; running instances finish and are counted.",
};

/** The buttons, with the outcome or the API's refusal beside them. */
export function BackfillControls({ b }: { b: Backfill }) {
  const client = useQueryClient();
  const [acted, setActed] = useState<string>();
  const control = useMutation({
    mutationFn: (verb: string) =>
      api<Backfill>(`/v1/backfills/${encodeURIComponent(b.id)}/${verb}`, {
        method: "POST",
        body: "{}",
      }),
    onSuccess: (next, verb) => {
      setActed(`${verb}: now ${next.state}`);
      client.setQueryData(["backfill", b.id], next);
      void client.invalidateQueries({ queryKey: ["backfills"] });
    },
  });
  const verbs = ACTIONS[b.state] ?? [];
  return (
    <div className="controls">
      {verbs.map((verb) => (
        <button
          type="button"
          key={verb}
          disabled={control.isPending}
          onClick={() => {
            if (
              window.confirm(`${verb} backfill ${b.id.slice(0, 8)} of ${b.workflow}? ${WHY[verb]}`)
            )
              control.mutate(verb);
          }}
        >
          {verb}
        </button>
      ))}
      {verbs.length === 0 ? <span className="note">{b.state}: no control applies.</span> : null}
      {control.error ? <ErrorNote error={control.error} /> : null}
      {acted && !control.error ? <span className="note">{acted}</span> : null}
    </div>
  );
}

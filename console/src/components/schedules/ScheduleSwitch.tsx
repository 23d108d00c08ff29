/**
 * A schedule's online/offline switch: a confirmed `POST /v1/schedules/{id}/online|offline`; a
 * refusal is shown as the API's message next to it.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { Schedule } from "../../../../lib/cli/api-types.generated";
import { api } from "../../api";
import { ErrorNote } from "../ErrorNote";

/** The switch (a button with role `switch`: Tab to it, Enter or Space to flip it). */
export function ScheduleSwitch({ s }: { s: Schedule }) {
  const client = useQueryClient();
  const online = s.state === "ONLINE";
  const flip = useMutation({
    mutationFn: (verb: "online" | "offline") =>
      api<Schedule>(`/v1/schedules/${encodeURIComponent(s.id)}/${verb}`, {
        method: "POST",
        body: "{}",
      }),
    onSuccess: (next) => {
      client.setQueryData(["schedule", s.id], next);
      void client.invalidateQueries({ queryKey: ["schedules"] });
      void client.invalidateQueries({ queryKey: ["schedule", s.id] });
    },
  });
  const verb = online ? "offline" : "online";
  return (
    <span className="schedule-switch">
      <button
        type="button"
        role="switch"
        aria-checked={online}
        aria-label={`schedule ${s.id.slice(0, 8)} online`}
        className={online ? "switch on" : "switch off"}
        disabled={flip.isPending}
        title={online ? "ONLINE: click to stop its fires" : "OFFLINE: click to fire again"}
        onClick={() => {
          const why = online
            ? "It stops firing; runs already queued still start."
            : "It fires from now on; the times missed while offline are not caught up.";
          if (window.confirm(`Put schedule ${s.id.slice(0, 8)} of ${s.workflow} ${verb}? ${why}`))
            flip.mutate(verb);
        }}
      >
        <span className="knob" aria-hidden="true" />
        {online ? "ONLINE" : "OFFLINE"}
      </button>
      {flip.error ? <ErrorNote error={flip.error} /> : null}
    </span>
  );
}

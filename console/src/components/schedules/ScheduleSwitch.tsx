/**
 * A schedule's online/offline switch: a confirmed `POST /v1/schedules/{id}/online|offline`; a
 * refusal is shown as the API's message next to it.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { Schedule } from "../../../../lib/cli/api-types.generated";
import { api } from "../../api";
import { StateSwitch } from "../StateSwitch";

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
  const why = online
    ? "It stops firing; runs already queued still start."
    : "It fires from now on; the times missed while offline are not caught up.";
  return (
    <StateSwitch
      online={online}
      label={`schedule ${s.id.slice(0, 8)} online`}
      titles={{
        online: "ONLINE: click to stop its fires",
        offline: "OFFLINE: click to fire again",
      }}
      question={`Put schedule ${s.id.slice(0, 8)} of ${s.workflow} ${verb}? ${why}`}
      pending={flip.isPending}
      error={flip.error}
      onFlip={() => flip.mutate(verb)}
    />
  );
}

/**
 * A trigger's online/offline switch: a confirmed `POST /v1/triggers/{id}/online|offline`; a
 * refusal is shown as the API's message next to it. An OFFLINE trigger starts nothing.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "../../api";
import { StateSwitch } from "../StateSwitch";
import type { Trigger } from "./types";

export function TriggerSwitch({ t }: { t: Trigger }) {
  const client = useQueryClient();
  const online = t.state === "ONLINE";
  const flip = useMutation({
    mutationFn: (verb: "online" | "offline") =>
      api<Trigger>(`/v1/triggers/${encodeURIComponent(t.id)}/${verb}`, {
        method: "POST",
        body: "{}",
      }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["triggers"] }),
  });
  const verb = online ? "offline" : "online";
  const why = online
    ? "Matching events start nothing while it is offline; runs it started go on."
    : "Matching events start runs again (those sent while it was offline do not).";
  return (
    <StateSwitch
      online={online}
      label={`trigger ${t.id.slice(0, 8)} online`}
      titles={{
        online: "ONLINE: click to stop it starting runs",
        offline: "OFFLINE: click to start runs again",
      }}
      question={`Put trigger ${t.id.slice(0, 8)} of ${t.workflow} ${verb}? ${why}`}
      pending={flip.isPending}
      error={flip.error}
      onFlip={() => flip.mutate(verb)}
    />
  );
}

/** What a trigger's limits refused: runs over the rate, and loops cut off (empty when none). */
export function TriggerRefusals({ t }: { t: Trigger }) {
  const stop = t.lastLoopStop;
  return (
    <>
      {t.refusedRuns > 0 ? (
        <div className="note warn">
          {t.refusedRuns} run{t.refusedRuns === 1 ? "" : "s"} refused over the rate limit
        </div>
      ) : null}
      {stop ? (
        <div className="note warn" title={`chain: ${stop.chain.join(" → ") || "none"}`}>
          loop stopped {t.loopStops} time{t.loopStops === 1 ? "" : "s"}:{" "}
          {stop.reason === "DEPTH"
            ? `a run ${stop.depth} triggers deep (limit ${stop.limit})`
            : `one event led to ${stop.limit} runs (the limit)`}
        </div>
      ) : null}
    </>
  );
}

/** A stored version of a workflow, read once (a version never changes). */
import { useQuery } from "@tanstack/react-query";
import { api } from "../../api";
import type { WorkflowDetail } from "./types";

/** `GET /v1/workflows/{name}?version=N`, cached for the session; disabled while `version` is 0. */
export function useVersion(name: string, version: number) {
  return useQuery({
    queryKey: ["definition", name, version],
    queryFn: () =>
      api<WorkflowDetail>(`/v1/workflows/${encodeURIComponent(name)}?version=${version}`),
    enabled: version > 0,
    staleTime: Number.POSITIVE_INFINITY,
  });
}

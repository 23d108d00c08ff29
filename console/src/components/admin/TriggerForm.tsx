/** The form that creates an event trigger (POST /v1/triggers; there is no edit). */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type Page, type WorkflowSummary } from "../../api";
import { ErrorNote } from "../ErrorNote";
import type { TriggerBody, TriggerCreated } from "./types";

const EXAMPLE_PATTERN = `{
  "source": ["com.example.orders"],
  "detail-type": ["OrderPlaced"]
}`;

/** `name=$.path` lines → the trigger's `params`; names the first line that is not one. */
export function parseParamLines(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`parameters, line ${n + 1}: expected name=$.json.path`);
    params[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return params;
}

/** Parses the pattern text, saying where JSON went wrong (the API checks the pattern itself). */
function parsePattern(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`event pattern: not JSON (${(e as Error).message})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new Error("event pattern: must be a JSON object");
  return v as Record<string, unknown>;
}

/**
 * Creates a trigger: the workflow it starts, its EventBridge event pattern (JSON), run
 * parameters taken from the event by JSONPath, and the debounce in seconds. A 400 (a bad
 * pattern, an unknown workflow) shows the API's message.
 */
export function TriggerForm(props: {
  onClose: () => void;
  /** The trigger created, with the API's warnings about its pattern. */
  onCreated: (t: TriggerCreated) => void;
}) {
  const client = useQueryClient();
  const workflows = useQuery({
    queryKey: ["workflows"],
    queryFn: () => api<Page<WorkflowSummary>>("/v1/workflows?limit=200"),
  });
  const [workflow, setWorkflow] = useState("");
  const [pattern, setPattern] = useState(EXAMPLE_PATTERN);
  const [params, setParams] = useState("");
  const [debounce, setDebounce] = useState("0");
  const create = useMutation({
    mutationFn: () => {
      const body: TriggerBody = {
        workflow: workflow.trim(),
        eventPattern: parsePattern(pattern),
        params: parseParamLines(params),
        debounceSeconds: Number(debounce || "0"),
      };
      return api<TriggerCreated>("/v1/triggers", { method: "POST", body: JSON.stringify(body) });
    },
    onSuccess: (t) => {
      void client.invalidateQueries({ queryKey: ["triggers"] });
      props.onCreated(t);
    },
  });
  return (
    <form
      className="dialog admin-form wide"
      aria-label="new trigger"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <h2>New trigger</h2>
      <label>
        Workflow{" "}
        <input
          name="workflow"
          list="trigger-workflows"
          required
          value={workflow}
          onChange={(e) => setWorkflow(e.currentTarget.value)}
        />
        <datalist id="trigger-workflows">
          {workflows.data?.items.map((w) => (
            <option key={w.name} value={w.name} />
          ))}
        </datalist>
      </label>
      <label>
        Event pattern (EventBridge, JSON)
        <textarea
          name="eventPattern"
          rows={7}
          spellCheck={false}
          value={pattern}
          onChange={(e) => setPattern(e.currentTarget.value)}
        />
      </label>
      <label>
        Parameters (name=$.detail.field, one per line; optional)
        <textarea
          name="params"
          rows={2}
          spellCheck={false}
          value={params}
          onChange={(e) => setParams(e.currentTarget.value)}
          placeholder="orderId=$.detail.id"
        />
      </label>
      <label>
        Debounce (seconds; an event this soon after the trigger's last run starts nothing){" "}
        <input
          name="debounceSeconds"
          type="number"
          min={0}
          max={86_400}
          value={debounce}
          onChange={(e) => setDebounce(e.currentTarget.value)}
        />
      </label>
      {create.error ? <ErrorNote error={create.error} /> : null}
      <div className="controls">
        <button type="submit" disabled={create.isPending}>
          Create
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The form that creates a task group or changes one's capacity and description (PUT). */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api } from "../../api";
import { ErrorNote } from "../ErrorNote";
import type { TaskGroup, TaskGroupBody } from "./types";

/**
 * Creates a group (`group` absent: the name is asked) or edits one (its name is fixed). A PUT
 * replaces the settings, so an emptied description is removed. A 400 shows the API's message.
 */
export function TaskGroupForm(props: { group?: TaskGroup; onClose: () => void }) {
  const client = useQueryClient();
  const [name, setName] = useState(props.group?.name ?? "");
  const [capacity, setCapacity] = useState(String(props.group?.capacity ?? 1));
  const [description, setDescription] = useState(props.group?.description ?? "");
  const save = useMutation({
    mutationFn: () => {
      // Not range-checked here: the API's own message says what is allowed (1..1000).
      const body: TaskGroupBody = {
        capacity: Number(capacity),
        ...(description.trim() ? { description: description.trim() } : {}),
      };
      return api<TaskGroup>(`/v1/task-groups/${encodeURIComponent(name.trim())}`, {
        method: "PUT",
        body: JSON.stringify(body),
      });
    },
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ["task-groups"] });
      props.onClose();
    },
  });
  const editing = !!props.group;
  return (
    <form
      className="dialog admin-form"
      aria-label={editing ? `edit task group ${props.group?.name}` : "new task group"}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <h2>{editing ? `Edit ${props.group?.name}` : "New task group"}</h2>
      {editing ? null : (
        <label>
          Name{" "}
          <input
            name="name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            placeholder="warehouse-db"
          />
        </label>
      )}
      <label>
        Capacity (1..1000 slots){" "}
        <input
          name="capacity"
          type="number"
          // No min/max here: the API's own message says what is allowed.
          required
          value={capacity}
          onChange={(e) => setCapacity(e.currentTarget.value)}
        />
      </label>
      <label>
        Description{" "}
        <input
          name="description"
          value={description}
          onChange={(e) => setDescription(e.currentTarget.value)}
          size={40}
        />
      </label>
      {editing && props.group && Number(capacity) < props.group.used ? (
        <p className="note">
          Lowering the capacity takes no slot away: holders keep theirs until their attempts end.
        </p>
      ) : null}
      {save.error ? <ErrorNote error={save.error} /> : null}
      <div className="controls">
        <button type="submit" disabled={save.isPending}>
          {editing ? "Save" : "Create"}
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

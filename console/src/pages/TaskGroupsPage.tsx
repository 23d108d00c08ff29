/**
 * Task groups: each one's capacity, slots in use and tasks waiting for a slot, live; create one,
 * change its capacity or description, delete it (confirmed; a 409 while slots are held is shown
 * as the API's message).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type Page } from "../api";
import { TaskGroupForm } from "../components/admin/TaskGroupForm";
import type { TaskGroup } from "../components/admin/types";
import { UsageBar } from "../components/admin/UsageBar";
import { ErrorNote } from "../components/ErrorNote";
import { formatInstant } from "../components/format";
import "./admin.css";

export function TaskGroupsPage() {
  const client = useQueryClient();
  const list = useQuery({
    queryKey: ["task-groups"],
    queryFn: () => api<Page<TaskGroup>>("/v1/task-groups?limit=200"),
    // Live while a slot is held or a task waits; slow when every group is idle.
    refetchInterval: (q) =>
      q.state.data?.items.some((g) => g.used > 0 || g.waiting > 0) ? 3_000 : 15_000,
  });
  // Which form is open: a new group (""), or the name of the group being edited.
  const [editing, setEditing] = useState<string>();
  const [deleted, setDeleted] = useState<string>();
  const remove = useMutation({
    mutationFn: (name: string) =>
      api(`/v1/task-groups/${encodeURIComponent(name)}`, { method: "DELETE" }),
    onSuccess: (_d, name) => {
      setDeleted(`task group ${name} deleted`);
      void client.invalidateQueries({ queryKey: ["task-groups"] });
    },
  });
  const items = list.data?.items ?? [];
  const group = editing ? items.find((g) => g.name === editing) : undefined;
  return (
    <main>
      <h1>Task groups</h1>
      <p className="note">
        A task group limits how many tasks that name it (<code>taskGroup</code>) run at once, across
        all workflows; the others wait for a slot.
      </p>
      <div className="controls">
        <button type="button" onClick={() => setEditing("")}>
          New task group…
        </button>
        {remove.error ? <ErrorNote error={remove.error} /> : null}
        {deleted && !remove.error ? <span className="note">{deleted}</span> : null}
      </div>
      {editing !== undefined ? (
        <TaskGroupForm
          key={editing}
          {...(group ? { group } : {})}
          onClose={() => setEditing(undefined)}
        />
      ) : null}
      {list.error ? <ErrorNote error={list.error} /> : null}
      {list.isPending ? <p aria-busy="true">Loading…</p> : null}
      {list.data && items.length === 0 ? (
        <p className="empty">
          No task groups yet. Create one with “New task group…” or{" "}
          <code>npx shoal task-group put NAME --capacity N</code>.
        </p>
      ) : null}
      {items.length > 0 ? (
        <table className="list task-groups">
          <thead>
            <tr>
              <th>Task group</th>
              <th>Capacity</th>
              <th>Used</th>
              <th>Waiting</th>
              <th>Description</th>
              <th>Changed</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((g) => (
              <tr key={g.name}>
                <td className="mono">{g.name}</td>
                <td>{g.capacity}</td>
                <td>
                  <UsageBar used={g.used} capacity={g.capacity} />
                </td>
                <td>{g.waiting > 0 ? <strong>{g.waiting} waiting</strong> : "0"}</td>
                <td>{g.description ?? ""}</td>
                <td>{formatInstant(g.updatedAt)}</td>
                <td className="actions">
                  <button
                    type="button"
                    aria-label={`edit ${g.name}`}
                    onClick={() => setEditing(g.name)}
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    aria-label={`delete ${g.name}`}
                    disabled={remove.isPending}
                    onClick={() => {
                      setDeleted(undefined);
                      if (window.confirm(`Delete task group ${g.name}?`)) remove.mutate(g.name);
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {list.data?.nextToken ? (
        <p className="note">Showing the first 200 groups (sorted by name).</p>
      ) : null}
    </main>
  );
}

/** Task groups (being built). */
export function TaskGroupsPage() {
  return (
    <main>
      <h1>Task groups</h1>
    </main>
  );
}

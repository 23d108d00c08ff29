/** Triggers (being built). */
export function TriggersPage() {
  return (
    <main>
      <h1>Triggers</h1>
    </main>
  );
}

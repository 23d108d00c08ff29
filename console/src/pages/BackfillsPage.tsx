/** Backfills (being built). */
export function BackfillsPage() {
  return (
    <main>
      <h1>Backfills</h1>
    </main>
  );
}

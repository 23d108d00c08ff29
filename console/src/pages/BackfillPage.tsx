/** A backfill (being built). */
export function BackfillPage() {
  return (
    <main>
      <h1>A backfill</h1>
    </main>
  );
}

/** A schedule (being built). */
export function SchedulePage() {
  return (
    <main>
      <h1>A schedule</h1>
    </main>
  );
}

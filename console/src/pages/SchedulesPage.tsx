/** Schedules (being built). */
export function SchedulesPage() {
  return (
    <main>
      <h1>Schedules</h1>
    </main>
  );
}

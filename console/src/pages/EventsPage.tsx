/** Events (being built). */
export function EventsPage() {
  return (
    <main>
      <h1>Events</h1>
    </main>
  );
}

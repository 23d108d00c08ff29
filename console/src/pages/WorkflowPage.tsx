/** A workflow (being built). */
export function WorkflowPage() {
  return (
    <main>
      <h1>A workflow</h1>
    </main>
  );
}

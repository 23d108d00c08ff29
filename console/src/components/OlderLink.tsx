/** "Older →": the next page of a list, its API `nextToken` kept in the URL (`?page=`). */
import { Link, useSearchParams } from "react-router";

/** Renders nothing on the last page (no `nextToken`); the other query parameters stay. */
export function OlderLink({ nextToken }: { nextToken: string | undefined }) {
  const [params] = useSearchParams();
  if (!nextToken) return null;
  return (
    <p>
      <Link to={`?${new URLSearchParams({ ...Object.fromEntries(params), page: nextToken })}`}>
        Older →
      </Link>
    </p>
  );
}

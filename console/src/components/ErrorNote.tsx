/** An API error as the user should see it: the API's own message, never a blank page. */
import { ApiError } from "../api";

export function ErrorNote({ error }: { error: unknown }) {
  const message =
    error instanceof ApiError
      ? `${error.message}${error.status ? ` (HTTP ${error.status})` : ""}`
      : String((error as Error)?.message ?? error);
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}

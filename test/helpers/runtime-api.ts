/**
 * The HTTP API of an in-process runtime (lib/runtime/runtime.ts), called the way API Gateway
 * calls its handler: for the engine tests that drive the dispatcher and worker by hand.
 */
import type { ApiDeps } from "../../lib/api/deps.js";
import { handleApiRequest } from "../../lib/api/router.js";
import { httpApiEvent } from "../../lib/standalone/lambda-events.js";

/** An API answer: its status and parsed JSON body (undefined when empty). */
export interface ApiAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the route answers
  body: any;
}

/** Calls `method path` with a JSON `body` (and extra `headers`) on the runtime's API. */
export async function callApi(
  api: ApiDeps,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiAnswer> {
  const res = await handleApiRequest(
    api,
    httpApiEvent({
      method,
      path,
      headers: { "content-type": "application/json", "user-agent": "test", ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      requestId: "r",
      timeEpoch: 0,
    }),
  );
  // API Gateway answers 200 for a result without a status.
  return { status: res.statusCode ?? 200, body: res.body ? JSON.parse(res.body) : undefined };
}

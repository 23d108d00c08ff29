/** Lambda handler of the HTTP API (API Gateway HTTP API, payload format 2.0). */
import { handleApiEvent } from "../../lib/api/router.js";
import type { HttpApiEvent, HttpApiResult } from "../../lib/engine/lambda-events.js";
import { runtime } from "../../lib/runtime/runtime.js";

export const handler = (event: HttpApiEvent): Promise<HttpApiResult> =>
  handleApiEvent(runtime().api, event);

/** Lambda handler of the HTTP API (API Gateway HTTP API, payload format 2.0). */

import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { handleApiRequest } from "../../lib/api/router.js";
import { configFromEnv } from "../../lib/aws/config.js";
import { createRuntime } from "../../lib/runtime/runtime.js";

/** Built at cold start from the function's environment, reused while warm. */
const rt = createRuntime(configFromEnv(process.env));

export const handler = (
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> => handleApiRequest(rt.api, event);

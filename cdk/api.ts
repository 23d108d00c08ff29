/**
 * The API's front door: an API Gateway HTTP API (`ANY /{proxy+}` → the api function) with IAM
 * authorisation, or a JWT authoriser when `jwt` is given, and access logs; or, for LocalStack's
 * free tier which has no HTTP API, a Lambda function URL with IAM auth (`apiMode=functionUrl`).
 */
import { RemovalPolicy } from "aws-cdk-lib";
import { type CfnStage, HttpApi, HttpMethod } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpIamAuthorizer, HttpJwtAuthorizer } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import {
  FunctionUrlAuthType,
  type IFunction,
  type Function as LambdaFunction,
} from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";

/** What {@link addApi} made: the base URL, and the HTTP API unless in functionUrl mode. */
export interface ShoalApi {
  url: string;
  httpApi?: HttpApi;
}

/** Adds the API in front of `fn` (see the file comment). */
export function addApi(
  scope: Construct,
  fn: LambdaFunction,
  opts: {
    prefix: string;
    mode?: "httpApi" | "functionUrl";
    jwt?: { issuer: string; audience: string[] };
    retention: RetentionDays;
    /** Of the access log group (default RETAIN). */
    removalPolicy?: RemovalPolicy;
  },
): ShoalApi {
  if (opts.mode === "functionUrl") {
    return { url: fn.addFunctionUrl({ authType: FunctionUrlAuthType.AWS_IAM }).url };
  }
  const httpApi = new HttpApi(scope, "HttpApi", {
    apiName: `${opts.prefix}-api`,
    defaultAuthorizer: opts.jwt
      ? new HttpJwtAuthorizer("Jwt", opts.jwt.issuer, {
          authorizerName: `${opts.prefix}-jwt`,
          jwtAudience: opts.jwt.audience,
        })
      : new HttpIamAuthorizer(),
  });
  addAccessLogs(
    scope,
    httpApi,
    opts.prefix,
    opts.retention,
    opts.jwt !== undefined,
    opts.removalPolicy,
  );
  httpApi.addRoutes({
    path: "/{proxy+}",
    methods: [HttpMethod.ANY],
    integration: new HttpLambdaIntegration("Api", fn as IFunction),
  });
  return { url: httpApi.apiEndpoint, httpApi };
}

/**
 * Access logs of every HTTP API call (who, what, status) in `/<prefix>/api-access`, kept like
 * the task logs; with JWT authorisation also the token's subject.
 */
export function addAccessLogs(
  scope: Construct,
  http: HttpApi,
  prefix: string,
  retention: RetentionDays,
  jwt: boolean,
  removalPolicy: RemovalPolicy = RemovalPolicy.RETAIN,
): LogGroup {
  const accessLogs = new LogGroup(scope, "ApiAccessLogs", {
    logGroupName: `/${prefix}/api-access`,
    retention,
    removalPolicy,
  });
  const stage = http.defaultStage?.node.defaultChild as CfnStage | undefined;
  if (stage) {
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: "$context.requestId",
        ip: "$context.identity.sourceIp",
        caller: "$context.identity.caller",
        user: "$context.identity.user",
        ...(jwt ? { sub: "$context.authorizer.claims.sub" } : {}),
        requestTime: "$context.requestTime",
        method: "$context.httpMethod",
        path: "$context.path",
        status: "$context.status",
        error: "$context.integrationErrorMessage",
      }),
    };
  }
  return accessLogs;
}

/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy` from the repository root (cdk.json). Context:
 * `-c prefix=shoal`, `-c apiMode=functionUrl` (LocalStack's free tier), `-c deletionProtection=false`.
 * Synthesis needs no AWS account and no Docker: the handlers are bundled by the local esbuild.
 */
import { App } from "aws-cdk-lib";
import { ShoalStack } from "./shoal-stack.js";

const app = new App();
const ctx = (k: string): string | undefined => app.node.tryGetContext(k);
new ShoalStack(app, ctx("stackName") ?? "Shoal", {
  shoal: {
    prefix: ctx("prefix") ?? "shoal",
    apiMode: ctx("apiMode") === "functionUrl" ? "functionUrl" : "httpApi",
    deletionProtection: ctx("deletionProtection") !== "false",
  },
});
app.synth();

/** `ShoalStack`: a stack holding one `Shoal` construct, configured from CDK context. */
import { Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { Shoal, type ShoalProps } from "./shoal.js";

export class ShoalStack extends Stack {
  readonly shoal: Shoal;

  constructor(scope: Construct, id: string, props: StackProps & { shoal?: ShoalProps } = {}) {
    super(scope, id, props);
    this.shoal = new Shoal(this, "Shoal", props.shoal ?? {});
  }
}

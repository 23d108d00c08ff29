/**
 * OUT values stay on the task items and the instance names the attempts that set them
 * (lib/engine/upstream-outputs.ts): a step reads its ancestors' values, nearer ancestors
 * override farther ones, and an attempt's values are read once per process.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { Dag } from "../../lib/core/dag.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { taskParams } from "../../lib/engine/engine-deps.js";
import {
  legacyOutputBytes,
  legacyOutputSlots,
  withUpstreamOutputs,
} from "../../lib/engine/upstream-outputs.js";
import { DynamoStore } from "../../lib/store/dynamo-store.js";
import type { TaskAttemptKey } from "../../lib/store/store.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { instanceRecord } from "../helpers/records.js";

const definition = parseWorkflowDefinition({
  tasks: [
    { code: "far", type: "SHELL", command: "true" },
    { code: "near", type: "SHELL", command: "true", upstream: ["far"] },
    { code: "side", type: "SHELL", command: "true" },
    { code: "last", type: "SHELL", command: "true", upstream: ["near"] },
  ],
});
const def = { definition, dag: new Dag(definition.tasks) };

describe("OUT values read from the attempts that set them", () => {
  let store: DynamoStore;
  const reads: TaskAttemptKey[][] = [];
  const counting = {
    getTaskOutputs: (keys: readonly TaskAttemptKey[]) => {
      reads.push([...keys]);
      return store.getTaskOutputs(keys);
    },
  };

  beforeAll(async () => {
    const aws = await useTestAws();
    store = new DynamoStore(testClients().dynamo, aws.config.tables);
    const attempt = (code: string, n: number, outputs: Record<string, string>) => ({
      instanceId: "run-1",
      workflow: "w",
      code,
      attempt: n,
      type: "SHELL" as const,
      state: "SUCCESS" as const,
      priority: "MEDIUM" as const,
      workerGroup: "default",
      submittedAt: 1,
      outputs,
    });
    await store.putTaskInstance(attempt("far", 1, { x: "far", y: "far" }));
    // A retried task: the attempt the instance names holds its values, not the first one.
    await store.putTaskInstance(attempt("near", 1, { x: "stale" }));
    await store.putTaskInstance(attempt("near", 2, { x: "near" }));
    await store.putTaskInstance(attempt("side", 1, { z: "side" }));
  });

  it("gives a task its ancestors' values, nearer ones first, reading each attempt once", async () => {
    const inst = instanceRecord("run-1", {
      workflow: "w",
      progress: { slots: "SSSD", attempts: { "1": [2, 1, 0] } },
      outputSlots: "111",
    });
    const filled = await withUpstreamOutputs(counting, inst, def, [3]);
    // Only ancestors are read: `side` is not one.
    expect(
      reads
        .flat()
        .map((k) => `${k.code}#${k.attempt}`)
        .sort(),
    ).toEqual(["far#1", "near#2"]);
    const params = taskParams(filled, def, 3, 1);
    expect(params.x).toBe("near");
    expect(params.y).toBe("far");
    expect(params.z).toBeUndefined();
    // The same attempts again (another step of the instance): no read.
    reads.length = 0;
    await withUpstreamOutputs(counting, inst, def, [3]);
    expect(reads).toEqual([]);
  });

  it("reads nothing for an instance without OUT values, or values already in memory", async () => {
    reads.length = 0;
    const none = instanceRecord("run-2", { progress: { slots: "SSSD", attempts: {} } });
    expect(await withUpstreamOutputs(counting, none, def, [3])).toBe(none);
    const inline = instanceRecord("run-3", {
      progress: { slots: "SSSD", attempts: {} },
      outputSlots: "1",
      outputs: { far: { x: "inline" } },
    });
    expect(await withUpstreamOutputs(counting, inline, def, [3])).toBe(inline);
    expect(reads).toEqual([]);
  });

  it("marks the tasks of an item written by 0.1.0 from the values it holds inline", () => {
    const old = instanceRecord("run-4", {
      progress: { slots: "SSSD", attempts: {} },
      outputs: { near: { x: "1" }, side: { z: "2" }, gone: { y: "3" } },
    });
    // `gone` is not in the definition: no mark.
    expect(legacyOutputSlots(old, def)).toBe("011");
    expect(legacyOutputBytes(old)).toBe(Buffer.byteLength(JSON.stringify(old.outputs)));
    expect(legacyOutputBytes(instanceRecord("run-5"))).toBe(0);
  });
});

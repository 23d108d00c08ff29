/**
 * Edges of the DynamoDB store where an emulator may be more lenient than DynamoDB: pages of a
 * filtered list (Limit counts items read, not items returned), tokens used on another list,
 * the largest definition the store accepts (DynamoDB's 400 KB item size) and the longest names
 * the API accepts as index keys (DynamoDB refuses index key values over 1024/2048 bytes or
 * empty, which dynalite does not check). Runs in `npm test` on dynalite and in
 * `npm run test:dynamodb-local` on DynamoDB Local: the same assertions hold on both.
 */
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../../lib/core/model.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { DynamoStore } from "../../lib/store/dynamo-store.js";
import { MAX_STORED_DEFINITION_BYTES } from "../../lib/store/dynamo-workflows.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { instanceRecord } from "../helpers/records.js";

/** A definition of `tasks` tasks with random (incompressible) commands of `chars` each. */
function randomDefinition(tasks: number, chars: number, last = chars): WorkflowDefinition {
  return parseWorkflowDefinition({
    tasks: Array.from({ length: tasks }, (_, i) => ({
      code: `t${i}`,
      type: "SHELL",
      command: `echo ${randomBytes(i === tasks - 1 ? last : chars)
        .toString("base64")
        .slice(0, i === tasks - 1 ? last : chars)}`,
    })),
  });
}

const gzipped = (def: WorkflowDefinition) => gzipSync(JSON.stringify(def)).length;

describe("DynamoDB store edges", () => {
  let store: DynamoStore;
  beforeAll(async () => {
    const aws = await useTestAws();
    store = new DynamoStore(testClients().dynamo, aws.config.tables);
    for (let i = 0; i < 12; i++) {
      const state = i % 4 === 0 ? "SUCCESS" : "RUNNING";
      await store.putInstance(
        instanceRecord(`a${i}`, { workflow: "A", createdAt: 1000 + i, state }),
      );
      await store.putInstance(instanceRecord(`b${i}`, { workflow: "B", createdAt: 2000 + i }));
    }
  });

  it("walks a filtered list to its end through short pages, newest first", async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await store.listInstances({
        workflow: "A",
        state: "SUCCESS",
        limit: 2,
        nextToken: token,
      });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.instanceId));
      token = page.nextToken;
      pages++;
    } while (token && pages < 20);
    expect(seen).toEqual(["a8", "a4", "a0"]);
    expect(token).toBeUndefined();
  });

  it("refuses one list's token on another list, with or without a filter", async () => {
    const first = await store.listInstances({ workflow: "A", limit: 2 });
    expect(first.nextToken).toBeDefined();
    for (const q of [{ workflow: "B" }, {}, { workflow: "B", state: "RUNNING" as const }]) {
      await expect(
        store.listInstances({ ...q, limit: 3, nextToken: first.nextToken }),
      ).rejects.toMatchObject({ code: "ValidationError" });
    }
  });

  it("stores and reads back the largest definition it accepts (one item under 400 KB)", async () => {
    // Seven 60 KB commands, then an eighth sized so the gzipped body lands just under the cap.
    const chars = 60_000;
    let last = 1_000;
    let def = randomDefinition(8, chars, last);
    for (let i = 0; i < 6; i++) {
      const room = MAX_STORED_DEFINITION_BYTES - 512 - gzipped(def);
      if (room >= 0 && room < 1024) break;
      last = Math.min(chars, Math.max(1, last + Math.floor(room / 0.77)));
      def = randomDefinition(8, chars, last);
    }
    const size = gzipped(def);
    expect(size).toBeLessThanOrEqual(MAX_STORED_DEFINITION_BYTES);
    expect(size).toBeGreaterThan(MAX_STORED_DEFINITION_BYTES - 4096);
    expect(
      await store.putDefinition({ name: "big", version: 1, definition: def, createdAt: 1 }),
    ).toBe(true);
    expect((await store.getDefinition("big", 1))?.definition).toEqual(def);
  });

  it("keeps the longest workflow name the API accepts as an index key", async () => {
    const name = `w${"x".repeat(127)}`; // NAME_PATTERN: 128 characters at most
    expect(await store.putInstance(instanceRecord("long1", { workflow: name, createdAt: 5 }))).toBe(
      true,
    );
    const page = await store.listInstances({ workflow: name, limit: 5 });
    expect(page.items.map((i) => i.instanceId)).toEqual(["long1"]);
    expect(
      await store.putWorkflowHead(
        { name, latestVersion: 1, releaseState: "ONLINE", createdAt: 1, updatedAt: 1 },
        0,
      ),
    ).toBe(true);
    expect((await store.getWorkflowHead(name))?.latestVersion).toBe(1);
  });
});

/**
 * Halt markers, in the commands table: `halt:<instanceId>` names the latest STOP and the latest
 * PAUSE command accepted for the instance (attributes `stopCommand`, `pauseCommand`), so that a
 * worker that has just claimed an attempt can tell, with strongly consistent reads by key, whether
 * a halt was promised that the dispatcher has not carried out yet (lib/engine/halt-gate.ts). The
 * pending-commands index cannot answer that: it is eventually consistent. A marker whose commands
 * are DONE (or gone) is stale and simply ignored, so nothing has to clean it up when an instance
 * resumes or reruns; the retention sweep deletes it with the instance's done commands
 * (lib/store/dynamo-expired.ts).
 */
import { type DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { getConsistent, strip } from "./dynamo-common.js";
import type { CommandRecord } from "./records.js";
import type { HaltCommandType } from "./store.js";

/** The marker's attribute that names the latest command of each type. */
const ATTRIBUTE: Record<HaltCommandType, string> = {
  STOP: "stopCommand",
  PAUSE: "pauseCommand",
};

/** `halt:<instanceId>`: the key of an instance's marker in the commands table. */
export function haltMarkerId(instanceId: string): string {
  return `halt:${instanceId}`;
}

export class DynamoHaltMarkers {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Names `commandId` as the instance's latest command of `type` (one UpdateItem; the other
   * type's attribute is kept). `markedAt` (epoch ms) is what retention ages it by.
   */
  async markHalt(
    instanceId: string,
    type: HaltCommandType,
    commandId: string,
    now: number,
  ): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { commandId: haltMarkerId(instanceId) },
        UpdateExpression: "SET #c = :c, instanceId = :i, markedAt = :now",
        ExpressionAttributeNames: { "#c": ATTRIBUTE[type] },
        ExpressionAttributeValues: { ":c": commandId, ":i": instanceId, ":now": now },
      }),
    );
  }

  /**
   * A command the instance's marker names that is still PENDING (STOP first), if any: one
   * strongly consistent GetItem of the marker (1 read unit, also when it is absent), plus one per
   * command it names.
   */
  async pendingHalt(instanceId: string): Promise<CommandRecord | undefined> {
    const marker = await getConsistent(this.db, this.table, {
      commandId: haltMarkerId(instanceId),
    });
    if (!marker) return undefined;
    for (const type of ["STOP", "PAUSE"] as const) {
      const commandId = marker[ATTRIBUTE[type]];
      if (typeof commandId !== "string") continue;
      const item = await getConsistent(this.db, this.table, { commandId });
      if (item?.state === "PENDING") return strip<CommandRecord>(item, "pendingShard");
    }
    return undefined;
  }
}

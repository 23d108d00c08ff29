/**
 * A standalone restarted on its data dir right after a `kill -9` must find dynalite's database
 * free. Its old dynamodb emulator stops when its parent dies, but dynalite's close waited for
 * every connection to end, and the keep-alive connections of a `shoal worker` or `shoal sweeper`
 * that outlived standalone never end: the old process lived on, holding LevelDB's lock, and the
 * new dynalite failed on its first request ("Database is closed"). Now the close cuts the
 * connections, and a new emulator waits for a lock still held (lib/standalone/leveldb-lock.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulators } from "../../lib/standalone/emulators.js";
import { waitForLevelDbLock } from "../../lib/standalone/leveldb-lock.js";
import { until } from "../helpers/poll.js";

interface LevelDb {
  open(): Promise<void>;
  close(): Promise<void>;
}

/** A LevelDB database opened with dynalite's own `level`: it holds the same lock. */
async function holdLock(path: string): Promise<LevelDb> {
  const req = createRequire(createRequire(import.meta.url).resolve("dynalite"));
  const { Level } = req("level") as { Level: new (p: string) => LevelDb };
  const db = new Level(path);
  await db.open();
  return db;
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "shoal-dynalite-restart-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("dynalite over a data dir a previous run used", () => {
  it("a new emulator waits for the old one to let go of the database, then serves", async () => {
    const dataDir = join(root, "wait");
    const held = await holdLock(join(dataDir, "dynamodb"));
    let waited = "";
    const starting = startEmulators({
      dataDir,
      only: "dynamodb",
      onLockWait: (path) => {
        waited = path;
      },
    });
    // Found locked: the emulator waits.
    expect(
      await until(() => waited || undefined, { what: "the emulator to find the lock held" }),
    ).toBe(join(dataDir, "dynamodb"));
    await held.close();
    const em = await starting;
    const client = new DynamoDBClient({
      endpoint: em.dynamodbEndpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
    });
    try {
      expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
    } finally {
      client.destroy();
      await em.stop();
    }
  });

  it("a lock held past the wait is an error naming the database", async () => {
    const path = join(root, "held");
    const held = await holdLock(path);
    try {
      await expect(waitForLevelDbLock(path, { timeoutMs: 200 })).rejects.toThrow(
        `the LevelDB lock of ${path} is still held after 0.2 s`,
      );
    } finally {
      await held.close();
    }
  });

  it("stop ends while a client is mid-request on a kept-alive connection, and frees the database", async () => {
    const dataDir = join(root, "busy");
    const em = await startEmulators({ dataDir, only: "dynamodb" });
    // A connection in the middle of a request (its headers not all sent yet): the server's close
    // does not cut such a connection, it waits for it.
    const url = new URL(em.dynamodbEndpoint);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once("connect", () => r()));
    socket.write("POST / HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n");
    socket.on("error", () => {});
    try {
      const started = Date.now();
      await em.stop();
      expect(Date.now() - started).toBeLessThan(5_000);
      // The lock is free: the database opens at once.
      await (await holdLock(join(dataDir, "dynamodb"))).close();
    } finally {
      socket.destroy();
    }
  });
});

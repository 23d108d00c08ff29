/**
 * A dynalite child for test/integration/dynalite-atomic-writes.test.ts: on disk at argv[2], and
 * once told "arm" it SIGKILLs itself at the first LevelDB write that touches an item key — the
 * moment a `kill -9` (or a write failing on a full disk) splits an item write in dynalite.
 */
import { createRequire } from "node:module";
import { startEmulators } from "../../lib/standalone/emulators.js";

type Op = { key: unknown };
interface LevelProto {
  _put(key: unknown, ...rest: unknown[]): Promise<void>;
  _del(key: unknown, ...rest: unknown[]): Promise<void>;
  _batch(ops: Op[], ...rest: unknown[]): Promise<void>;
}

let armed = false;
const die = (keys: unknown[]) => {
  if (armed && keys.some((k) => String(k).startsWith("item-")))
    process.kill(process.pid, "SIGKILL");
};
// The Level class dynalite itself loads (its own require of "level").
const fromDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"));
const proto = (fromDynalite("level") as { Level: { prototype: LevelProto } }).Level.prototype;
const { _put, _del, _batch } = proto;
proto._put = function (key, ...rest) {
  die([key]);
  return _put.call(this, key, ...rest);
};
proto._del = function (key, ...rest) {
  die([key]);
  return _del.call(this, key, ...rest);
};
proto._batch = function (ops, ...rest) {
  die(ops.map((o) => o.key));
  return _batch.call(this, ops, ...rest);
};

const em = await startEmulators({ dataDir: process.argv[2] as string, only: "dynamodb" });
process.on("message", (m) => {
  if (m === "arm") {
    armed = true;
    process.send?.("armed");
  }
  if (m === "stop") void em.stop().then(() => process.exit(0));
});
process.on("disconnect", () => process.exit(0));
process.send?.({ endpoint: em.dynamodbEndpoint });

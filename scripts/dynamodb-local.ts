/**
 * Finds Amazon's DynamoDB Local (DynamoDBLocal.jar and its DynamoDBLocal_lib) for
 * `npm run test:dynamodb-local`, installing it first when missing. The jar ships inside the npm
 * package amplify-dynamodb-simulator, whose dependencies are heavy: it is not a dependency of
 * the repository but installed on demand into a cache outside it (as .ci/run does for Node 22),
 * `$SHOAL_DDB_LOCAL_PREFIX` or `~/.cache/shoal-dynamodb-local`.
 *
 * Run directly (`tsx scripts/dynamodb-local.ts`) it installs if needed and prints the jar's path.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package (and version) that carries the jar. */
export const DDB_LOCAL_PACKAGE = "amplify-dynamodb-simulator@2.9.30";

/** Where DynamoDB Local's files are. */
export interface DynamoDbLocalFiles {
  /** Absolute path of DynamoDBLocal.jar. */
  jar: string;
  /** Absolute path of DynamoDBLocal_lib (its jars and the sqlite4java native libraries). */
  libDir: string;
}

/** The install prefix: `$SHOAL_DDB_LOCAL_PREFIX`, else `~/.cache/shoal-dynamodb-local`. */
export function dynamoDbLocalPrefix(env: NodeJS.ProcessEnv = process.env): string {
  return env.SHOAL_DDB_LOCAL_PREFIX || join(homedir(), ".cache", "shoal-dynamodb-local");
}

function filesUnder(prefix: string): DynamoDbLocalFiles {
  const dir = join(prefix, "node_modules", "amplify-dynamodb-simulator", "emulator");
  return { jar: join(dir, "DynamoDBLocal.jar"), libDir: join(dir, "DynamoDBLocal_lib") };
}

/**
 * The jar and its library directory, installed with npm into `prefix` when missing (about 350 MB
 * and 10–30 s on a fresh machine; later calls only check that the files exist).
 * @throws Error when npm fails or the package no longer holds the jar where expected.
 */
export function locateDynamoDbLocal(prefix = dynamoDbLocalPrefix()): DynamoDbLocalFiles {
  const files = filesUnder(prefix);
  if (existsSync(files.jar) && existsSync(files.libDir)) return files;
  console.error(`dynamodb-local: installing ${DDB_LOCAL_PACKAGE} into ${prefix}`);
  execFileSync(
    "npm",
    ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", DDB_LOCAL_PACKAGE],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  if (!existsSync(files.jar) || !existsSync(files.libDir)) {
    throw new Error(`${DDB_LOCAL_PACKAGE} installed into ${prefix} but ${files.jar} is missing`);
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(locateDynamoDbLocal().jar);
}

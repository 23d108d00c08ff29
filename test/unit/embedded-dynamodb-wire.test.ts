/**
 * The embedded DynamoDB engine over its wire protocol (lib/embedded/dynamodb-http.ts), driven by
 * the real SDK clients: DynamoDBClient and DynamoDBDocumentClient parse every answer and error.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand as RawQuery,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedDynamoDBClient } from "../../lib/embedded/dynamodb-client.js";
import { handleDynamoDbHttp } from "../../lib/embedded/dynamodb-http.js";

let server: Server;
let raw: DynamoDBClient;
let doc: DynamoDBDocumentClient;
const engine = new EmbeddedDynamoDBClient({ file: ":memory:", region: "eu-west-1" });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const a = await handleDynamoDbHttp(
        engine,
        String(req.headers["x-amz-target"]),
        Buffer.concat(chunks).toString("utf8"),
      );
      res.writeHead(a.status, a.headers);
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  raw = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: "eu-west-1",
    credentials: { accessKeyId: "x", secretAccessKey: "y" },
    maxAttempts: 1,
  });
  doc = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
});

afterAll(async () => {
  raw.destroy();
  await new Promise((r) => server.close(r));
});

describe("DynamoDB over the wire", () => {
  it("creates, describes and lists tables; errors parse into the SDK's exception classes", async () => {
    const input = {
      TableName: "wire",
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" as const },
        { AttributeName: "n", AttributeType: "N" as const },
      ],
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" as const },
        { AttributeName: "n", KeyType: "RANGE" as const },
      ],
      BillingMode: "PAY_PER_REQUEST" as const,
    };
    const created = await raw.send(new CreateTableCommand(input));
    expect(created.TableDescription?.TableStatus).toBe("ACTIVE");
    await expect(raw.send(new CreateTableCommand(input))).rejects.toBeInstanceOf(
      ResourceInUseException,
    );
    const d = await raw.send(new DescribeTableCommand({ TableName: "wire" }));
    expect(d.Table?.TableArn).toBe("arn:aws:dynamodb:eu-west-1:000000000000:table/wire");
    expect(d.Table?.CreationDateTime).toBeInstanceOf(Date);
    expect((await raw.send(new ListTablesCommand({}))).TableNames).toEqual(["wire"]);
    const missing = await raw.send(new DescribeTableCommand({ TableName: "nope" })).catch((e) => e);
    expect(missing).toBeInstanceOf(ResourceNotFoundException);
    expect(missing.message).toBe("Requested resource not found");
    await raw.send(
      new UpdateTimeToLiveCommand({
        TableName: "wire",
        TimeToLiveSpecification: { AttributeName: "exp", Enabled: true },
      }),
    );
    expect(
      (await raw.send(new DescribeTimeToLiveCommand({ TableName: "wire" }))).TimeToLiveDescription,
    ).toEqual({ TimeToLiveStatus: "ENABLED", AttributeName: "exp" });
  });

  it("carries binaries, numbers, documents, pages and capacity both ways", async () => {
    await raw.send(
      new PutItemCommand({
        TableName: "wire",
        Item: { pk: { S: "p" }, n: { N: "1.50" }, bin: { B: Uint8Array.from([0, 255, 7]) } },
      }),
    );
    const got = await doc.send(new GetCommand({ TableName: "wire", Key: { pk: "p", n: 1.5 } }));
    expect(got.Item).toEqual({ pk: "p", n: 1.5, bin: Uint8Array.from([0, 255, 7]) });
    await doc.send(
      new BatchWriteCommand({
        RequestItems: {
          wire: [2, 3, 4].map((n) => ({
            PutRequest: {
              Item: { pk: "p", n, doc: { list: [n, "x", { deep: true }], skip: undefined } },
            },
          })),
        },
      }),
    );
    const page = await doc.send(
      new QueryCommand({
        TableName: "wire",
        KeyConditionExpression: "pk = :p AND n > :n",
        ExpressionAttributeValues: { ":p": "p", ":n": 1.5 },
        Limit: 2,
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    expect(page.Items).toEqual([
      { pk: "p", n: 2, doc: { list: [2, "x", { deep: true }] } },
      { pk: "p", n: 3, doc: { list: [3, "x", { deep: true }] } },
    ]);
    expect(page.LastEvaluatedKey).toEqual({ pk: "p", n: 3 });
    expect(page.ConsumedCapacity).toEqual({
      TableName: "wire",
      CapacityUnits: 0.5,
      ReadCapacityUnits: 0.5,
    });
    const rawPage = await raw.send(
      new RawQuery({
        TableName: "wire",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": { S: "p" } },
        ExclusiveStartKey: { pk: { S: "p" }, n: { N: "3" } },
      }),
    );
    expect(rawPage.Items?.map((i) => i.n?.N)).toEqual(["4"]);
  });

  it("returns a failed condition's item and validation messages as DynamoDB does", async () => {
    const fail = await doc
      .send(
        new UpdateCommand({
          TableName: "wire",
          Key: { pk: "p", n: 2 },
          UpdateExpression: "SET v = :v",
          ConditionExpression: "attribute_not_exists(pk)",
          ExpressionAttributeValues: { ":v": 1 },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      )
      .catch((e) => e);
    expect(fail).toBeInstanceOf(ConditionalCheckFailedException);
    expect(fail.message).toBe("The conditional request failed");
    expect(fail.Item?.pk).toEqual({ S: "p" });
    const bad = await doc
      .send(
        new UpdateCommand({
          TableName: "wire",
          Key: { pk: "p", n: 2 },
          UpdateExpression: "SET v = :v",
          ExpressionAttributeValues: { ":v": 1, ":x": 2 },
        }),
      )
      .catch((e) => e);
    expect([bad.name, bad.message, bad.$metadata.httpStatusCode]).toEqual([
      "ValidationException",
      "Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}",
      400,
    ]);
  });
});

/**
 * EmbeddedSQSClient: the SQS API subset Shoal uses, in-process on a node:sqlite file, behind the
 * SDK client contract of lib/embedded/client-stack.ts. Commands are served by class name
 * (`SendMessageCommand`, …) with outputs shaped as @aws-sdk/client-sqs returns them, and errors
 * named as it names them (EmbeddedServiceError). Several processes may open one file.
 *
 * ```ts
 * const sqs = new EmbeddedSQSClient({ file: "data/shoal.db", region: "us-east-1" });
 * const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "q" }));
 * ```
 */
import { EmbeddedClient, type EmbeddedCommand, type SendOptions } from "./client-stack.js";
import { invalidParameter, sqsError } from "./sqs-errors.js";
import { numeric } from "./sqs-queue-attrs.js";
import {
  createQueue,
  deleteQueue,
  getQueueAttributes,
  getQueueUrl,
  listQueues,
  purgeQueue,
  type QueueNaming,
  queueArnOf,
  queueOf,
  setQueueAttributes,
} from "./sqs-queue-ops.js";
import { changeVisibility, deleteOne, nextDue, receiveOnce } from "./sqs-receive.js";
import {
  checkBatch,
  checkBatchSize,
  failure,
  prepareSend,
  type SendEntry,
  storeMessages,
} from "./sqs-send.js";
import { SqsStore } from "./sqs-store.js";

/** Options of {@link EmbeddedSQSClient}. */
export interface EmbeddedSQSOptions {
  /** The database file (created if missing); `:memory:` for a private, process-local one. */
  file: string;
  /** Region in URLs and ARNs (default us-east-1). */
  region?: string;
  /** Start of queue URLs, e.g. `http://127.0.0.1:4566` (default `http://sqs.<region>.localhost`). */
  urlBase?: string;
  /** Clock, ms since the epoch (tests); default Date.now. */
  now?: () => number;
}

// biome-ignore lint/suspicious/noExplicitAny: command inputs are the SDK's, checked field by field
type Input = any;

/** The operations served, by SQS operation name. */
export const SQS_OPERATIONS = [
  "CreateQueue",
  "GetQueueUrl",
  "ListQueues",
  "GetQueueAttributes",
  "SetQueueAttributes",
  "DeleteQueue",
  "PurgeQueue",
  "SendMessage",
  "SendMessageBatch",
  "ReceiveMessage",
  "DeleteMessage",
  "DeleteMessageBatch",
  "ChangeMessageVisibility",
  "ChangeMessageVisibilityBatch",
] as const;

export class EmbeddedSQSClient extends EmbeddedClient {
  private readonly store: SqsStore;
  private readonly naming: QueueNaming;
  private readonly now: () => number;
  private destroyed = false;
  /** Wakes this client's waiting receives (destroy ends them). */
  private readonly waits = new Set<() => void>();

  constructor(opts: EmbeddedSQSOptions) {
    super("SQSClient");
    this.store = SqsStore.acquire(opts.file);
    this.naming = {
      region: opts.region ?? "us-east-1",
      ...(opts.urlBase ? { urlBase: opts.urlBase } : {}),
    };
    this.now = opts.now ?? Date.now;
  }

  protected execute(
    commandName: string,
    input: unknown,
    _command: EmbeddedCommand,
    options?: SendOptions,
  ): Promise<Record<string, unknown>> {
    return this.call(commandName.replace(/Command$/, ""), input, options?.abortSignal);
  }

  /**
   * Serves one operation by its SQS name (`SendMessage`, …), without the middleware stack (the
   * wire protocol's entry, lib/embedded/sqs-http.ts).
   * @param signal ends a waiting ReceiveMessage (the SDK's `abortSignal`).
   * @throws EmbeddedServiceError as SQS answers; UnsupportedOperation for an operation not served;
   *   an error named `AbortError` when `signal` aborts before the call has taken anything.
   */
  async call(
    operation: string,
    input: Input = {},
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    if (this.destroyed || this.store.isClosed) throw new Error("EmbeddedSQSClient was destroyed");
    if (signal?.aborted) throw abortError();
    const s = this.store;
    const i = input ?? {};
    switch (operation) {
      case "CreateQueue":
        return createQueue(s, this.naming, i, this.now());
      case "GetQueueUrl":
        return getQueueUrl(s, this.naming, i);
      case "ListQueues":
        return listQueues(s, this.naming, i);
      case "GetQueueAttributes":
        return getQueueAttributes(s, this.naming, i, this.now());
      case "SetQueueAttributes":
        return this.wakeAfter(i.QueueUrl, () => setQueueAttributes(s, i, this.now()));
      case "DeleteQueue":
        return this.wakeAfter(i.QueueUrl, () => deleteQueue(s, i));
      case "PurgeQueue":
        return purgeQueue(s, i);
      case "SendMessage":
        return this.sendMessage(i);
      case "SendMessageBatch":
        return this.sendMessageBatch(i);
      case "ReceiveMessage":
        return this.receiveMessage(i, signal);
      case "DeleteMessage":
        return this.deleteMessages(i, [{ Id: "0", ReceiptHandle: i.ReceiptHandle }], false);
      case "DeleteMessageBatch":
        checkBatch(i.Entries);
        return this.deleteMessages(i, i.Entries, true);
      case "ChangeMessageVisibility":
        return this.changeVisibilities(
          i,
          [{ Id: "0", ReceiptHandle: i.ReceiptHandle, VisibilityTimeout: i.VisibilityTimeout }],
          false,
        );
      case "ChangeMessageVisibilityBatch":
        checkBatch(i.Entries);
        return this.changeVisibilities(i, i.Entries, true);
      default:
        throw sqsError(
          "UnsupportedOperation",
          `${operation} is not supported by the embedded SQS engine.`,
        );
    }
  }

  private wakeAfter<T>(url: unknown, fn: () => T): T {
    const out = fn();
    if (typeof url === "string") this.store.notify(url.split("/").pop() ?? "");
    return out;
  }

  private sendMessage(i: Input): Record<string, unknown> {
    const q = queueOf(this.store, i.QueueUrl);
    const prepared = prepareSend(q, i as SendEntry);
    const [r] = this.store.tx(() => storeMessages(this.store, q, [prepared], this.now()));
    this.store.notify(q.name);
    return { ...r };
  }

  private sendMessageBatch(i: Input): Record<string, unknown> {
    const q = queueOf(this.store, i.QueueUrl);
    const entries = i.Entries as SendEntry[] | undefined;
    checkBatch(entries);
    const list = entries as SendEntry[];
    checkBatchSize(list.map((e) => Buffer.byteLength(e.MessageBody ?? "")));
    const failed: Array<ReturnType<typeof failure>> = [];
    const ok: Array<{ id: string; p: ReturnType<typeof prepareSend> }> = [];
    for (const e of list) {
      try {
        ok.push({ id: e.Id as string, p: prepareSend(q, e) });
      } catch (err) {
        failed.push(failure(e.Id as string, err));
      }
    }
    const results =
      ok.length > 0
        ? this.store.tx(() =>
            storeMessages(
              this.store,
              q,
              ok.map((o) => o.p),
              this.now(),
            ),
          )
        : [];
    if (ok.length > 0) this.store.notify(q.name);
    return {
      Successful: results.map((r, n) => ({ Id: ok[n]?.id, ...r })),
      Failed: failed,
    };
  }

  private async receiveMessage(i: Input, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const q = queueOf(this.store, i.QueueUrl);
    const max = i.MaxNumberOfMessages ?? 1;
    if (!Number.isInteger(max) || max < 1 || max > 10)
      throw invalidParameter("MaxNumberOfMessages", max, "Must be between 1 and 10, if provided.");
    const wait = i.WaitTimeSeconds ?? numeric(q.attrs, "ReceiveMessageWaitTimeSeconds");
    if (!Number.isInteger(wait) || wait < 0 || wait > 20)
      throw invalidParameter("WaitTimeSeconds", wait, "Must be >= 0 and <= 20, if provided.");
    const visibility = i.VisibilityTimeout ?? numeric(q.attrs, "VisibilityTimeout");
    if (!Number.isInteger(visibility) || visibility < 0 || visibility > 43_200)
      throw invalidParameter("VisibilityTimeout", visibility, "must be from 0 to 43200 seconds.");
    const opts = {
      max,
      visibilitySeconds: visibility,
      systemNames: [...(i.AttributeNames ?? []), ...(i.MessageSystemAttributeNames ?? [])],
      attributeNames: i.MessageAttributeNames ?? [],
      arnOf: (name: string) => queueArnOf(this.naming, name),
    };
    const deadline = Date.now() + wait * 1000;
    for (let current = q; ; ) {
      const now = this.now();
      const { messages, redriven } = receiveOnce(this.store, current, opts, now);
      for (const dlq of redriven) this.store.notify(dlq);
      if (messages.length > 0) return { Messages: messages };
      if (Date.now() >= deadline || this.destroyed || this.store.isClosed) return {};
      const due = nextDue(this.store, current, now);
      const until = due === undefined ? deadline : Math.min(deadline, Date.now() + (due - now));
      const w = this.store.wait(current.name, until);
      this.waits.add(w.wake);
      signal?.addEventListener("abort", w.wake, { once: true });
      try {
        await w.done;
      } finally {
        this.waits.delete(w.wake);
        signal?.removeEventListener("abort", w.wake);
      }
      // Woken by destroy() or an abort: end before taking anything (other clients of this file
      // may still hold the connection, so a receive now would succeed and hide a message that
      // nobody will process). As in the SDK, an aborted call throws.
      if (signal?.aborted) throw abortError();
      if (this.destroyed || this.store.isClosed) return {};
      // The queue is read again: it may have been changed or deleted meanwhile.
      current = queueOf(this.store, i.QueueUrl);
    }
  }

  private deleteMessages(
    i: Input,
    entries: Array<{ Id?: string; ReceiptHandle?: string }>,
    batch: boolean,
  ): Record<string, unknown> {
    const q = queueOf(this.store, i.QueueUrl);
    const Successful: Array<{ Id: string }> = [];
    const Failed: Array<ReturnType<typeof failure>> = [];
    this.store.tx(() => {
      for (const e of entries) {
        try {
          deleteOne(this.store, q, e.ReceiptHandle);
          Successful.push({ Id: e.Id as string });
        } catch (err) {
          if (!batch) throw err;
          Failed.push(failure(e.Id as string, err));
        }
      }
    });
    // Deleting a FIFO group's message in flight unlocks the group for a waiting receive.
    if (q.fifo && Successful.length > 0) this.store.notify(q.name);
    return batch ? { Successful, Failed } : {};
  }

  private changeVisibilities(
    i: Input,
    entries: Array<{ Id?: string; ReceiptHandle?: string; VisibilityTimeout?: number }>,
    batch: boolean,
  ): Record<string, unknown> {
    const q = queueOf(this.store, i.QueueUrl);
    const Successful: Array<{ Id: string }> = [];
    const Failed: Array<ReturnType<typeof failure>> = [];
    const now = this.now();
    this.store.tx(() => {
      for (const e of entries) {
        try {
          changeVisibility(this.store, q, e.ReceiptHandle, e.VisibilityTimeout, now);
          Successful.push({ Id: e.Id as string });
        } catch (err) {
          if (!batch) throw err;
          Failed.push(failure(e.Id as string, err));
        }
      }
    });
    // A message made visible (or due sooner) may be what a waiting receive wants.
    this.store.notify(q.name);
    return batch ? { Successful, Failed } : {};
  }

  /** Ends this client's waits (when it is the file's last client) and releases the file. */
  override destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const wake of this.waits) wake();
    this.waits.clear();
    this.store.release();
  }
}

/** The error the SDK throws for an aborted request (its name is what callers test). */
function abortError(): Error {
  const e = new Error("Request aborted");
  e.name = "AbortError";
  return e;
}

export type { EmbeddedCommand };

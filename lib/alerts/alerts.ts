/**
 * Alerts, put together: the enqueuer fed with state-change events (enqueue.ts) and the deliverer
 * (deliverer.ts), over the deliveries kept in the timers table (dynamo-deliveries.ts). Standalone
 * feeds it from its in-process bus and runs the deliverer in a loop of its own; on AWS the alerts
 * Lambda (functions/alerts) is fed by an EventBridge rule and a one-minute schedule.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { DefinitionCache } from "../engine/definitions.js";
import type { TaskLogs } from "../logs/task-log.js";
import type { SecretSource } from "../secrets/secret-source.js";
import type { ScheduleStore } from "../store/schedules.js";
import type { Store } from "../store/store.js";
import type { AlertsConfig } from "./channels.js";
import { alertsConfigSchema } from "./channels.js";
import { AlertDeliverer, type DeliveryReport, type PassOptions } from "./deliverer.js";
import type { DeliveryRecord } from "./deliveries.js";
import { DynamoDeliveries } from "./dynamo-deliveries.js";
import { type BusEventLike, enqueueAlerts } from "./enqueue.js";
import type { EmailPublisher } from "./send.js";

export interface AlertsOptions {
  dynamo: DynamoDBDocumentClient;
  /** The timers table's name. */
  timersTable: string;
  store: Store;
  definitions: DefinitionCache;
  schedules: ScheduleStore;
  logs?: TaskLogs;
  now: () => number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Channels and retry settings; absent: no channel (every delivery fails, saying so). */
  config?: AlertsConfig;
  /** Base of console links, when the configuration gives none. */
  consoleUrl?: string;
  publishEmail?: EmailPublisher;
  /**
   * The secret source of channels whose URL or headers hold `${secret:NAME}`, built on first use
   * (standalone: SHOAL_SECRET_<NAME> and its secrets file; AWS: Secrets Manager and SSM).
   */
  secrets?: () => SecretSource;
  /** Days a delivery record is kept after its last write (SHOAL_INSTANCE_RETENTION_DAYS; 0: forever). */
  retentionDays?: number;
}

/** `make`, called on first use only, its result kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

export class Alerts {
  readonly deliveries: DynamoDeliveries;
  readonly deliverer: AlertDeliverer;
  readonly config: AlertsConfig;

  constructor(private readonly opts: AlertsOptions) {
    this.deliveries = new DynamoDeliveries(opts.dynamo, opts.timersTable, {
      ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}),
      now: opts.now,
    });
    this.config = opts.config ?? alertsConfigSchema.parse({});
    const consoleUrl = this.config.consoleUrl ?? opts.consoleUrl;
    this.deliverer = new AlertDeliverer({
      store: opts.store,
      definitions: opts.definitions,
      ...(opts.logs ? { logs: opts.logs } : {}),
      ...(consoleUrl ? { consoleUrl } : {}),
      deliveries: this.deliveries,
      config: this.config,
      now: opts.now,
      ...(opts.log ? { log: opts.log } : {}),
      ...(opts.publishEmail ? { publishEmail: opts.publishEmail } : {}),
      ...(opts.secrets ? { secrets: once(opts.secrets) } : {}),
    });
  }

  /** Sets the base of console links once it is known (standalone: after its server started). */
  setConsoleUrl(url: string): void {
    this.deliverer.deps.consoleUrl ??= url;
  }

  /**
   * Writes the deliveries one event asks for (idempotent: a repeated event writes nothing).
   * @returns the deliveries this call created.
   * @throws store errors (throttling past the SDK's retries): the alerts Lambda lets them out so
   *   that Lambda retries the event.
   */
  enqueue(event: BusEventLike): Promise<DeliveryRecord[]> {
    return enqueueAlerts(
      {
        store: this.opts.store,
        definitions: this.opts.definitions,
        schedules: this.opts.schedules,
        deliveries: this.deliveries,
        now: this.opts.now,
      },
      event,
    );
  }

  /**
   * {@link enqueue} for standalone's in-process bus, which has no retry: never throws, a failure
   * is logged (the event's state is written already; the alert is lost, docs/alerts.md).
   */
  async onEvent(event: BusEventLike): Promise<DeliveryRecord[]> {
    try {
      return await this.enqueue(event);
    } catch (e) {
      this.opts.log?.("alerts: event not turned into alerts", {
        detailType: String(event["detail-type"]),
        error: (e as Error).message,
      });
      return [];
    }
  }

  /** Sends what is due (one page). @throws store errors (the caller's loop logs them). */
  deliverDue(opts: PassOptions = {}): Promise<DeliveryReport> {
    return this.deliverer.deliverDue(opts);
  }

  /** Sends the deliveries `enqueue` just created. @throws store errors. */
  deliverCreated(
    records: readonly DeliveryRecord[],
    opts: PassOptions = {},
  ): Promise<DeliveryReport> {
    return this.deliverer.deliverCreated(records, opts);
  }
}

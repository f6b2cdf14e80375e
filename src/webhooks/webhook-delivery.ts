import { type Telemetry, UnrecoverableError, Worker } from "bullmq";
import { Agent } from "undici";
import { parseRetryAfter } from "../client/retry.js";
import type { WebhookConfig } from "../config/load-config.js";
import { assertAllowedWebhookUrl, guardedLookup } from "../net/address-guard.js";
import { onReconnected } from "../redis/bullmq-internals.js";
import { isRedisConnectionError, outageLog } from "../redis/errors.js";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from "./moneyq-signature.js";
import { standardHeaders } from "./standard-signature.js";
import { type Delivery, WebhookDeliveries, webhookQueueName } from "./webhook-deliveries.js";
import { type ResultStreamSource, WebhookRelay } from "./webhook-relay.js";
import { retryWait, WEBHOOK_RETRY_SCHEDULE_MS } from "./webhook-retry.js";

const WEBHOOK_TIMEOUT_MS = 10_000;
/** After the close's deadline and the end of every delivery, how long the worker gets to hand jobs back. */
const HAND_BACK_MS = 1_000;

export interface WebhookDeliveryOptions extends ResultStreamSource {
  readonly prefix: string;
  readonly webhook: WebhookConfig;
  readonly retentionMs: number;
  readonly metrics: WebhookMetrics;
  /** The delivery queue's operations; opened (and closed) here when not given. */
  readonly deliveries?: WebhookDeliveries;
  /** Waits before each retry; WEBHOOK_RETRY_SCHEDULE_MS unless a test shortens it. */
  readonly retryScheduleMs?: readonly number[];
  /** Defaults to Math.random; the jitter's source. */
  readonly random?: () => number;
  /** BullMQ's spans of each delivery (src/tracing), when tracing is on. */
  readonly telemetry?: Telemetry | undefined;
}

export type WebhookOutcome = "delivered" | "blocked" | "retry" | "failed" | "gone";

/** What deliveries count (the pipeline's metrics provide it): each delivery's outcome. */
export interface WebhookMetrics {
  readonly webhookDeliveries: { inc(labels: { outcome: WebhookOutcome }): void };
}

export interface RunningWebhooks {
  /**
   * Stops relaying and delivering. Deliveries still in flight after `deadlineMs` are ended (a
   * slow receiver must not hold up the shutdown); they are retried later. Idempotent.
   */
  close(deadlineMs?: number): Promise<void>;
}

/** A refusal the receiver asked to be retried after a while (429 or 503 with Retry-After). */
class RetryAfterError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

/** Starts the relay (stream to queue) and the delivery worker (queue to the receiver). */
export async function startWebhooks(options: WebhookDeliveryOptions): Promise<RunningWebhooks> {
  const { webhook, logger } = options;
  assertAllowedWebhookUrl(webhook.url, webhook.allowedRanges);
  const ownDeliveries = options.deliveries
    ? undefined
    : new WebhookDeliveries(options.connection, options.prefix, options.telemetry);
  const deliveries = (options.deliveries ?? ownDeliveries) as WebhookDeliveries;
  if (await deliveries.resumeIfMoved(webhook.url))
    logger.warn("webhooks: the URL that answered 410 Gone was replaced; deliveries go on");
  const schedule = options.retryScheduleMs ?? WEBHOOK_RETRY_SCHEDULE_MS;
  const random = options.random ?? Math.random;
  // HTTP/1.1 only, as the payments client: undici 8 would offer h2 to an https receiver.
  const agent = new Agent({
    allowH2: false,
    connect: { lookup: guardedLookup(webhook.allowedRanges) },
  });
  const retentionSeconds = Math.ceil(options.retentionMs / 1000);
  const worker = new Worker<Delivery>(
    webhookQueueName(options.connection.isCluster),
    (job) =>
      deliver({ ...options, deliveries }, agent, job.data, job.attemptsMade, schedule.length + 1),
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: 8,
      ...(options.telemetry && { telemetry: options.telemetry }),
      settings: {
        backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) =>
          retryWait(
            attemptsMade,
            error instanceof RetryAfterError ? error.retryAfterMs : undefined,
            schedule,
            random,
          ),
      },
    },
  );
  // A Redis outage makes the worker's connections fail several times a second: one line per outage.
  const outage = outageLog(logger, "webhook worker");
  worker.on("error", (error) => {
    if (isRedisConnectionError(error)) outage.failed(error);
    else if (options.errors) options.errors.report("webhook worker", "webhook worker error", error);
    else logger.error({ err: error.message }, "webhook worker error");
  });
  onReconnected(worker, () => outage.restored());
  // A worker closed before its connections are ready leaves their first commands to reject unheard.
  await worker.waitUntilReady();
  const relay = new WebhookRelay({
    connection: options.connection,
    prefix: options.prefix,
    streams: options.streams,
    queue: deliveries.queue,
    logger,
    errors: options.errors,
    jobOptions: {
      attempts: schedule.length + 1,
      backoff: { type: "webhook" },
      removeOnComplete: { age: retentionSeconds },
      removeOnFail: { age: retentionSeconds },
    },
  });
  await relay.start();
  let closing: Promise<void> | undefined;
  return {
    close(deadlineMs = WEBHOOK_TIMEOUT_MS) {
      closing ??= (async () => {
        await relay.close();
        const graceful = worker.close().catch(() => undefined);
        if (!(await settlesWithin(graceful, deadlineMs))) {
          await agent.destroy().catch(() => undefined);
          await settlesWithin(graceful, HAND_BACK_MS);
        }
        await agent.close().catch(() => undefined);
        await ownDeliveries?.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/** One attempt: signed with every secret, judged by the receiver's status. */
async function deliver(
  options: WebhookDeliveryOptions & { readonly deliveries: WebhookDeliveries },
  agent: Agent,
  delivery: Delivery,
  attemptsMade: number,
  attempts: number,
): Promise<void> {
  const { webhook, metrics } = options;
  const target = new URL(webhook.url);
  let status: number;
  let retryAfter: string | undefined;
  try {
    const response = await agent.request({
      origin: target.origin,
      path: target.pathname + target.search,
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...standardHeaders(webhook.secrets, delivery.eventId, delivery.body),
        [SIGNATURE_HEADER]: signWebhook(webhook.secrets, delivery.body),
        [EVENT_ID_HEADER]: delivery.eventId,
      },
      body: delivery.body,
      headersTimeout: WEBHOOK_TIMEOUT_MS,
      bodyTimeout: WEBHOOK_TIMEOUT_MS,
    });
    status = response.statusCode;
    const header = response.headers["retry-after"];
    retryAfter = typeof header === "string" ? header : undefined;
    await response.body.dump();
  } catch (error) {
    if ((error as { code?: string }).code === "webhook_address_blocked") {
      metrics.webhookDeliveries.inc({ outcome: "blocked" });
      throw new UnrecoverableError((error as Error).message);
    }
    throw countRetry(metrics, attemptsMade, attempts, error as Error);
  }
  if (status >= 200 && status < 300) {
    metrics.webhookDeliveries.inc({ outcome: "delivered" });
    return;
  }
  if (status === 410) {
    // The receiver says the endpoint is gone for good: stop, keep every event, let an operator
    // decide. Counted as answered, before the stop: whoever sees the stop sees the count.
    metrics.webhookDeliveries.inc({ outcome: "gone" });
    await options.deliveries.stop(webhook.url);
    options.logger.error(
      "webhooks: the receiver answered 410 Gone; deliveries are stopped until resumed (moneyq webhooks resume)",
    );
    throw new UnrecoverableError("webhook receiver answered HTTP 410 Gone: deliveries stopped");
  }
  const message = `webhook receiver answered HTTP ${status}`;
  const waitMs = status === 429 || status === 503 ? parseRetryAfter(retryAfter) : undefined;
  throw countRetry(
    metrics,
    attemptsMade,
    attempts,
    waitMs === undefined ? new Error(message) : new RetryAfterError(message, waitMs),
  );
}

function countRetry(
  metrics: WebhookMetrics,
  attemptsMade: number,
  attempts: number,
  error: Error,
): Error {
  metrics.webhookDeliveries.inc({ outcome: attemptsMade + 1 >= attempts ? "failed" : "retry" });
  return error;
}

/** True when `promise` settled within `ms`. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref()),
  ]);
}

import { Queue, UnrecoverableError, Worker } from "bullmq";
import { Agent } from "undici";
import type { WebhookConfig } from "../config.js";
import { assertAllowedWebhookUrl, guardedLookup } from "../net/address-guard.js";
import { isRedisConnectionError, outageLog } from "../redis/errors.js";
import { type ResultStreamSource, WebhookRelay } from "./webhook-relay.js";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from "./webhook-signature.js";

export const WEBHOOK_QUEUE = "webhooks";
export const WEBHOOK_ATTEMPTS = 12;
const WEBHOOK_TIMEOUT_MS = 10_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 3_600_000;
/** After the close's deadline and the end of every delivery, how long the worker gets to hand jobs back. */
const HAND_BACK_MS = 1_000;

export interface WebhookDeliveryOptions extends ResultStreamSource {
  readonly prefix: string;
  readonly webhook: WebhookConfig;
  readonly retentionMs: number;
  readonly metrics: WebhookMetrics;
}

/** What deliveries count (the pipeline's metrics provide it): each delivery's outcome. */
export interface WebhookMetrics {
  readonly webhookDeliveries: {
    inc(labels: { outcome: "delivered" | "blocked" | "retry" | "failed" }): void;
  };
}

export interface RunningWebhooks {
  /**
   * Stops relaying and delivering. Deliveries still in flight after `deadlineMs` are ended (a
   * slow receiver must not hold up the shutdown); they are retried later. Idempotent.
   */
  close(deadlineMs?: number): Promise<void>;
}

interface Delivery {
  readonly eventId: string;
  readonly body: string;
}

/** Starts the relay (stream to queue) and the delivery worker (queue to the receiver). */
export async function startWebhooks(options: WebhookDeliveryOptions): Promise<RunningWebhooks> {
  const { webhook, logger, metrics } = options;
  assertAllowedWebhookUrl(webhook.url, webhook.allowedRanges);
  const agent = new Agent({ connect: { lookup: guardedLookup(webhook.allowedRanges) } });
  const target = new URL(webhook.url);
  const retentionSeconds = Math.ceil(options.retentionMs / 1000);
  const queue = new Queue<Delivery>(WEBHOOK_QUEUE, {
    connection: options.connection,
    prefix: options.prefix,
    defaultJobOptions: {
      attempts: WEBHOOK_ATTEMPTS,
      backoff: { type: "webhook" },
      removeOnComplete: { age: retentionSeconds },
      removeOnFail: { age: retentionSeconds },
    },
  });
  const worker = new Worker<Delivery>(
    WEBHOOK_QUEUE,
    async (job) => {
      let status: number;
      try {
        const response = await agent.request({
          origin: target.origin,
          path: target.pathname + target.search,
          method: "POST",
          headers: {
            "content-type": "application/json",
            [SIGNATURE_HEADER]: signWebhook(webhook.secret, job.data.body),
            [EVENT_ID_HEADER]: job.data.eventId,
          },
          body: job.data.body,
          headersTimeout: WEBHOOK_TIMEOUT_MS,
          bodyTimeout: WEBHOOK_TIMEOUT_MS,
        });
        status = response.statusCode;
        await response.body.dump();
      } catch (error) {
        if ((error as { code?: string }).code === "webhook_address_blocked") {
          metrics.webhookDeliveries.inc({ outcome: "blocked" });
          throw new UnrecoverableError((error as Error).message);
        }
        throw countRetry(metrics, job.attemptsMade, error as Error);
      }
      if (status >= 200 && status < 300) {
        metrics.webhookDeliveries.inc({ outcome: "delivered" });
        return;
      }
      throw countRetry(
        metrics,
        job.attemptsMade,
        new Error(`webhook receiver answered HTTP ${status}`),
      );
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: 8,
      settings: {
        backoffStrategy: (attemptsMade: number) =>
          Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (attemptsMade - 1)),
      },
    },
  );
  // A Redis outage makes the worker's connections fail several times a second: one line per outage.
  const outage = outageLog(logger, "webhook worker");
  worker.on("error", (error) => {
    if (isRedisConnectionError(error)) outage.failed(error);
    else logger.error({ err: error.message }, "webhook worker error");
  });
  worker.on("ready", () => outage.restored());
  const relay = new WebhookRelay({
    connection: options.connection,
    streamKey: options.streamKey,
    queue,
    logger,
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
        await queue.close().catch(() => undefined);
        await agent.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}

function countRetry(metrics: WebhookMetrics, attemptsMade: number, error: Error): Error {
  metrics.webhookDeliveries.inc({
    outcome: attemptsMade + 1 >= WEBHOOK_ATTEMPTS ? "failed" : "retry",
  });
  return error;
}

/** True when `promise` settled within `ms`. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref()),
  ]);
}

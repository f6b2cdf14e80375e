import { Queue, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { Agent } from "undici";
import type { WebhookConfig } from "../config.js";
import type { Logger } from "../logger.js";
import type { PipelineMetrics } from "../metrics/pipeline-metrics.js";
import { assertAllowedWebhookUrl, guardedLookup } from "./address-guard.js";
import { WebhookRelay } from "./webhook-relay.js";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from "./webhook-signature.js";

export const WEBHOOK_QUEUE = "webhooks";
export const WEBHOOK_ATTEMPTS = 12;
const WEBHOOK_TIMEOUT_MS = 10_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 3_600_000;

export interface WebhookDeliveryOptions {
  readonly connection: Redis;
  readonly prefix: string;
  readonly streamKey: string;
  readonly webhook: WebhookConfig;
  readonly retentionMs: number;
  readonly logger: Logger;
  readonly metrics: PipelineMetrics;
}

export interface RunningWebhooks {
  close(): Promise<void>;
}

interface Delivery {
  readonly eventId: string;
  readonly body: string;
}

/** Starts the relay (stream to queue) and the delivery worker (queue to the receiver). */
export async function startWebhooks(options: WebhookDeliveryOptions): Promise<RunningWebhooks> {
  const { webhook, logger, metrics } = options;
  if (!webhook.allowPrivateAddresses) assertAllowedWebhookUrl(webhook.url);
  const agent = new Agent(
    webhook.allowPrivateAddresses ? {} : { connect: { lookup: guardedLookup } },
  );
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
  worker.on("error", (error) => logger.error({ err: error.message }, "webhook worker error"));
  const relay = new WebhookRelay({
    connection: options.connection,
    streamKey: options.streamKey,
    queue,
    logger,
  });
  await relay.start();
  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        await relay.close();
        await worker.close().catch(() => undefined);
        await queue.close().catch(() => undefined);
        await agent.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}

function countRetry(metrics: PipelineMetrics, attemptsMade: number, error: Error): Error {
  metrics.webhookDeliveries.inc({
    outcome: attemptsMade + 1 >= WEBHOOK_ATTEMPTS ? "failed" : "retry",
  });
  return error;
}

import { UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import {
  type Delivery,
  deliveryJobId,
  WEBHOOK_QUEUE,
  WebhookDeliveries,
} from "../../src/webhooks/webhook-deliveries.js";

/**
 * Deliveries that gave up, made the way the delivery worker makes them: queued as the relay
 * queues them, then failed by a worker (no receiver needed). One per `account`, ids `1-N`.
 */
export async function failedDeliveries(
  connection: Redis,
  prefix: string,
  accounts: readonly string[],
): Promise<string[]> {
  const deliveries = new WebhookDeliveries(connection, prefix);
  const base = Date.now();
  const ids = accounts.map((_, i) => `${base}-${i}`);
  await deliveries.queue.addBulk(
    accounts.map((account, i) => ({
      name: "deliver",
      data: {
        eventId: ids[i] as string,
        body: JSON.stringify({ jobId: `j_${i}`, account, result: "succeeded" }),
      },
      opts: { jobId: deliveryJobId(ids[i] as string), attempts: 1 },
    })),
  );
  let failed = 0;
  const done = new Promise<void>((resolve) => {
    const worker = new Worker<Delivery>(
      WEBHOOK_QUEUE,
      async () => {
        throw new UnrecoverableError("webhook receiver answered HTTP 500");
      },
      { connection, prefix },
    );
    worker.on("failed", () => {
      failed += 1;
      if (failed === accounts.length) void worker.close().then(resolve);
    });
  });
  await done;
  await deliveries.close();
  return ids;
}

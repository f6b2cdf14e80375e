import { UnrecoverableError, Worker } from "bullmq";
import type { RedisConnection } from "../../src/redis/connection.js";
import { newEventId } from "../../src/results/event-envelope.js";
import {
  type Delivery,
  deliveryJobId,
  WebhookDeliveries,
  webhookQueueName,
} from "../../src/webhooks/webhook-deliveries.js";

/**
 * Deliveries that gave up, made the way the delivery worker makes them: queued as the relay
 * queues them (an event envelope under its id), then failed by a worker (no receiver needed).
 * One per `account`.
 */
export async function failedDeliveries(
  connection: RedisConnection,
  prefix: string,
  accounts: readonly string[],
): Promise<string[]> {
  const deliveries = new WebhookDeliveries(connection, prefix);
  const ids = accounts.map(() => newEventId());
  await deliveries.queue.addBulk(
    accounts.map((account, i) => ({
      name: "deliver",
      data: {
        eventId: ids[i] as string,
        body: JSON.stringify({
          type: "job.succeeded",
          id: ids[i],
          timestamp: new Date().toISOString(),
          data: { jobId: `j_${i}`, account, result: "succeeded" },
        }),
      },
      opts: { jobId: deliveryJobId(ids[i] as string), attempts: 1 },
    })),
  );
  let failed = 0;
  const done = new Promise<void>((resolve) => {
    const worker = new Worker<Delivery>(
      webhookQueueName(false),
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

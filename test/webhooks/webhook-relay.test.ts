import { Queue } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { deliveryJobId } from "../../src/webhooks/webhook-deliveries.js";
import { WebhookRelay } from "../../src/webhooks/webhook-relay.js";
import { useTestRedis } from "../helpers/redis.js";
import { waitFor } from "../helpers/wait-until.js";

const redis = useTestRedis("webhook-relay");
const connection = redis.connect();
const queue = new Queue("relayed", { connection, prefix: redis.prefix });
afterAll(() => queue.close());

const event = (id: string) => JSON.stringify({ type: "job.succeeded", id, data: {} });

describe("the webhook relay over one stream per account (a cluster's layout)", () => {
  it("moves every account's events into the delivery queue, once each, and acknowledges them", async () => {
    const streams = [`${redis.prefix}:results:{alpha}`, `${redis.prefix}:results:{beta}`];
    const relay = new WebhookRelay({
      connection,
      prefix: redis.prefix,
      streams,
      logger: createLogger("silent"),
      queue,
      jobOptions: {},
    });
    await relay.start();
    try {
      // Written after the relay's groups exist (they start at the stream's end).
      for (const [i, stream] of streams.entries())
        for (const n of [1, 2]) await connection.xadd(stream, "*", "event", event(`evt_${i}_${n}`));
      const ids = ["evt_0_1", "evt_0_2", "evt_1_1", "evt_1_2"];
      const jobs = await waitFor(
        async () => Promise.all(ids.map((id) => queue.getJob(deliveryJobId(id)))),
        (found) => found.every((job) => job !== undefined),
        10_000,
        "a delivery job for each event of both streams",
      );
      expect(jobs.map((job) => JSON.parse(job?.data.body).id)).toEqual(ids);
      expect(await queue.count()).toBe(4);
      for (const stream of streams) {
        const pending = (await connection.xpending(stream, "webhooks")) as [number];
        expect(pending[0]).toBe(0);
      }
    } finally {
      await relay.close();
    }
  });
});

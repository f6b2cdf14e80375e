import { describe, expect, it } from "vitest";
import { RateGate } from "../../src/processors/rate-gate.js";
import { takeReadSlot } from "../../src/processors/read-slot.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import { singleRedis, useTestRedis } from "../helpers/redis.js";

// A re-check of a succeeded payout takes its slot as Rechecks does (processors/rechecks.ts):
// in the bulk lane, naming the account's queue, so that a confirmation lookup waiting there
// to be fetched goes first. The lookups' BullMQ priority is their lane's (1), bulk's 3.
const redis = useTestRedis("rechecklane");
const LOOKUP = 1 * 2 ** 32;

describe("a re-check's slot", () => {
  it("is never taken ahead of a confirmation lookup waiting in the account's queue", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:lane`;
    const queueKey = bullKeys.queue(prefix, accountQueueName(singleRedis, "acct"));
    const gate = new RateGate(connection, prefix, 0);
    const recheck = () =>
      takeReadSlot(gate, {
        account: "acct",
        perSecond: 50,
        lane: "bulk",
        queueKey,
        // The lane is what this shows, not the timing: a late wake-up still counts as sent.
        toleranceMs: 1_000,
      });

    // Two confirmations wait to be fetched: the re-check makes room, once for each.
    await connection.zadd(
      bullKeys.prioritized(queueKey),
      LOOKUP + 1,
      "confirm-1",
      LOOKUP + 2,
      "confirm-2",
    );
    expect(await recheck()).toEqual({ send: false, yielded: true });
    expect(await recheck()).toEqual({ send: false, yielded: true });

    // Fetched (out of the waiting set), they no longer hold it back.
    await connection.del(bullKeys.prioritized(queueKey));
    await new Promise((r) => setTimeout(r, 200));
    expect(await recheck()).toEqual({ send: true });
  });
});

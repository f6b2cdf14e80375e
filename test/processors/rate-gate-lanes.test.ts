import { describe, expect, it } from "vitest";
import { LaneHolds } from "../../src/outflow/lane-holds.js";
import { HIGH_LANE_RUN_CAP, RateGate, type Reservation } from "../../src/processors/rate-gate.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { accountPauseKey, keyspace } from "../../src/redis/keys.js";
import { singleRedis, useTestRedis } from "../helpers/redis.js";

const redis = useTestRedis("gatelanes");
const reserved = (r: Reservation) => {
  if (!r.reserved) throw new Error(`not reserved: ${JSON.stringify(r)}`);
  return r;
};

describe("RateGate: what must hold when a request leaves", () => {
  it("serves only the holder of the job's lock", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:lock`;
    const gate = new RateGate(connection, prefix, 0);
    const key = bullKeys.lock(`${prefix}:q`, "job-1");
    await connection.set(key, "worker-b:1");
    expect(
      await gate.reserve("acct", 50, 1, undefined, { lock: { key, token: "worker-a:7" } }),
    ).toEqual({ reserved: false, lockLost: true });
    reserved(await gate.reserve("acct", 50, 1, undefined, { lock: { key, token: "worker-b:1" } }));
    const slot = reserved(
      await gate.reserve("acct", 50, 1, undefined, { lock: { key, token: "worker-b:1" } }),
    );
    // The lock moved on between the reservation and the request's departure.
    await connection.set(key, "worker-c:3");
    expect(
      await gate.clear("acct", slot.at, false, { lock: { key, token: "worker-b:1" } }),
    ).toEqual({
      clear: false,
      lockLost: true,
    });
  });

  it("says until when the holder's lock surely lives, as the reservation and the clearance found it", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:lockttl`;
    // A 200 ms margin: clearance may come up to 100 ms after the slot.
    const gate = new RateGate(connection, prefix, 200);
    const key = bullKeys.lock(`${prefix}:q`, "job-1");
    const lock = { lock: { key, token: "worker-b:1" } };
    await connection.set(key, "worker-b:1", "PX", 60_000);
    const before = performance.now();
    const slot = reserved(await gate.reserve("acct", 50, 1, undefined, lock));
    // Counted from before the script read the lock's time to live: never later than it lapses.
    expect(slot.lockUntil).toBeGreaterThan(before);
    expect(slot.lockUntil).toBeLessThanOrEqual(performance.now() + 60_000);
    // Renewed to 5 s since: the clearance reads the lock again.
    await connection.pexpire(key, 5_000);
    const asked = performance.now();
    const clearance = await gate.clear("acct", slot.at, false, lock);
    if (!clearance.clear) throw new Error(`not clear: ${JSON.stringify(clearance)}`);
    expect(clearance.lockUntil).toBeGreaterThan(asked);
    expect(clearance.lockUntil).toBeLessThanOrEqual(performance.now() + 5_000);
    expect(clearance.lockUntil as number).toBeLessThan(slot.lockUntil as number);
    // Without a lock, nothing is said.
    const unlocked = reserved(await gate.reserve("acct", 50));
    expect(unlocked.lockUntil).toBeUndefined();
  });

  it("records a request without an idempotency key as sent when it leaves, and never serves it again", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:sent`;
    // A 40 ms margin: clearance may come up to 20 ms after the slot.
    const gate = new RateGate(connection, prefix, 40);
    const sentKey = bullKeys.job(`${prefix}:sent`, "job-2");
    const slot = reserved(await gate.reserve("acct", 50, 1, undefined, { sentKey }));
    expect(await connection.exists(sentKey)).toBe(0);
    expect(await gate.clear("acct", slot.at, false, { sentKey })).toEqual({ clear: true });
    expect(await connection.exists(sentKey)).toBe(1);
    expect(await gate.reserve("acct", 50, 1, undefined, { sentKey })).toEqual({
      reserved: false,
      alreadySent: true,
    });
  });

  it("holds every request of a paused account, reserved ahead or new, until the pause ends", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:pause`;
    const gate = new RateGate(connection, prefix, 0);
    const ahead = reserved(await gate.reserve("acct", 50));
    await gate.pause("acct", 300);
    const refused = await gate.reserve("acct", 50);
    expect("pausedMs" in refused && refused.pausedMs).toBeGreaterThan(200);
    const cleared = await gate.clear("acct", ahead.at, false);
    expect("pausedMs" in cleared && cleared.pausedMs).toBeGreaterThan(200);
    // A shorter pause never cuts a longer one short.
    await gate.pause("acct", 10);
    const still = await gate.reserve("acct", 50);
    expect("pausedMs" in still && still.pausedMs).toBeGreaterThan(100);
    await connection.set(accountPauseKey(keyspace(prefix), "other"), "{}");
    expect(await gate.reserve("other", 50)).toEqual({ reserved: false, held: true });
  });
});

/**
 * A gate whose first call is behind it. Bulk's reach ahead adds the fastest round trip the gate
 * has seen, and a first call's includes connecting a new connection: the lane cases measure
 * slots in intervals, so they start from a gate that has seen a real round trip.
 */
async function warmGate(connection: RedisConnection, prefix: string, marginMs: number) {
  const gate = new RateGate(connection, prefix, marginMs);
  await gate.reserve("warm-up", 50);
  await gate.reserve("warm-up", 50);
  return gate;
}

describe("RateGate: lanes", () => {
  const interval = 20.8; // 50 a second, with the default 40 ms margin

  it("bulk reserves at most two slots ahead; an urgent request takes a bulk slot not yet cleared", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:ahead`;
    const gate = await warmGate(connection, prefix, 40);
    const bulk = (n: number) =>
      Promise.all(
        Array.from({ length: n }, () => gate.reserve("acct", 50, 1, undefined, { lane: "bulk" })),
      );
    const first = await bulk(4);
    const slots = first.filter((r) => r.reserved);
    // Now, one interval and two intervals away; the fourth is told when to ask again.
    expect(slots).toHaveLength(3);
    const refused = first[3] as Reservation;
    expect("retryInMs" in refused && refused.retryInMs).toBeLessThanOrEqual(interval + 1);
    const urgent = reserved(await gate.reserve("acct", 50, 1, undefined, { lane: "urgent" }));
    const taken = reserved(slots[1] as Reservation);
    expect(urgent.at).toBeCloseTo(taken.at, 1);
    expect(await gate.clear("acct", taken.at, true)).toEqual({ clear: false, taken: true });
    const kept = reserved(slots[2] as Reservation);
    await new Promise((r) => setTimeout(r, Math.max(0, kept.delayMs - 2)));
    expect(await gate.clear("acct", kept.at, true)).toEqual({ clear: true });
  });

  it("bulk makes room once for each lookup or urgent job waiting to be fetched", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:yield`;
    const queueKey = bullKeys.queue(prefix, accountQueueName(singleRedis, "acct"));
    await connection.zadd(
      bullKeys.prioritized(queueKey),
      2 * 2 ** 32 + 1,
      "urgent-job",
      3 * 2 ** 32 + 2,
      "bulk-job",
    );
    const gate = await warmGate(connection, prefix, 0);
    const answers = await Promise.all(
      Array.from({ length: 3 }, () =>
        gate.reserve("acct", 50, 1, undefined, { lane: "bulk", queueKey }),
      ),
    );
    expect(answers.filter((a) => "yielded" in a)).toHaveLength(1);
    expect(answers.filter((a) => a.reserved)).toHaveLength(2);
  });

  it(`lookups and urgent requests take at most ${HIGH_LANE_RUN_CAP} slots in a row while bulk waits`, async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:cap`;
    const gate = await warmGate(connection, prefix, 0);
    // Bulk fills its two slots ahead, and a third bulk request is left waiting.
    await Promise.all(
      Array.from({ length: 4 }, () => gate.reserve("acct", 50, 1, undefined, { lane: "bulk" })),
    );
    const high = await Promise.all(
      Array.from({ length: HIGH_LANE_RUN_CAP + 2 }, (_, i) =>
        gate.reserve("acct", 50, 1, undefined, { lane: i % 2 === 0 ? "lookup" : "urgent" }),
      ),
    );
    expect(high.slice(0, HIGH_LANE_RUN_CAP).every((r) => r.reserved)).toBe(true);
    expect(high.slice(HIGH_LANE_RUN_CAP).some((r) => r.reserved)).toBe(false);
    // The waiting bulk request gets the next slot; then lookups and urgent requests go on.
    let bulk: Reservation;
    do {
      bulk = await gate.reserve("acct", 50, 1, undefined, { lane: "bulk" });
      if (!bulk.reserved)
        await new Promise((r) => setTimeout(r, "retryInMs" in bulk ? bulk.retryInMs : 5));
    } while (!bulk.reserved);
    reserved(await gate.reserve("acct", 50, 1, undefined, { lane: "urgent" }));
  });

  it("a bulk job held by its currency's lane during bulk's turn passes the turn to the next bulk job at once", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:heldturn`;
    const queueKey = bullKeys.queue(prefix, accountQueueName(singleRedis, "acct"));
    const prioritized = bullKeys.prioritized(queueKey);
    // Two NGN rows (their lane held for want of funds) and a KES row wait in the bulk lane.
    await connection.zadd(
      prioritized,
      ...[3 * 2 ** 32 + 7, "ngn-1", 3 * 2 ** 32 + 8, "ngn-2", 3 * 2 ** 32 + 9, "kes-1"],
    );
    await new LaneHolds(connection, keyspace(prefix)).holdForFunds(
      "acct",
      "NGN",
      "ngn-0",
      undefined,
    );
    const payout = (jobId: string, currency: string) => ({
      lane: "bulk" as const,
      queueKey,
      outflow: { jobId, currency, units: 100, limits: [] },
    });
    const gate = await warmGate(connection, prefix, 0);
    // Lookups take their run of slots; the next one makes room for bulk's oldest job.
    const high = await Promise.all(
      Array.from({ length: HIGH_LANE_RUN_CAP + 1 }, () =>
        gate.reserve("acct", 50, 1, undefined, { lane: "lookup", queueKey }),
      ),
    );
    expect(high[HIGH_LANE_RUN_CAP]).toEqual({ reserved: false, yielded: true });
    expect(await connection.zrange(prioritized, 0, "0")).toEqual(["ngn-1"]);
    // A worker fetches it; it is held, and the next bulk job is at the front at once.
    await connection.zrem(prioritized, "ngn-1");
    const first = await gate.reserve("acct", 50, 1, undefined, payout("ngn-1", "NGN"));
    expect("outflowHeld" in first && first.outflowHeld.cause).toBe("insufficient_funds");
    expect(await connection.zrange(prioritized, 0, "0")).toEqual(["ngn-2"]);
    expect(Number(await connection.zscore(prioritized, "ngn-2"))).toBe(0);
    // Bulk keeps its turn meanwhile: a lookup still waits.
    const lookup = await gate.reserve("acct", 50, 1, undefined, { lane: "lookup", queueKey });
    expect(lookup.reserved).toBe(false);
    await connection.zrem(prioritized, "ngn-2");
    const second = await gate.reserve("acct", 50, 1, undefined, payout("ngn-2", "NGN"));
    expect("outflowHeld" in second && second.outflowHeld.cause).toBe("insufficient_funds");
    expect(await connection.zrange(prioritized, 0, "0")).toEqual(["kes-1"]);
    // The KES row takes the slot, and the turn is over: lookups go on.
    await connection.zrem(prioritized, "kes-1");
    let kes: Reservation;
    do {
      kes = await gate.reserve("acct", 50, 1, undefined, payout("kes-1", "KES"));
      if (!kes.reserved)
        await new Promise((r) => setTimeout(r, "retryInMs" in kes ? kes.retryInMs : 5));
    } while (!kes.reserved);
    reserved(await gate.reserve("acct", 50, 1, undefined, { lane: "lookup", queueKey }));
  });

  it("when bulk waits only in the queue, its oldest job goes to the front and a high-lane job makes room", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:promote`;
    const queueKey = bullKeys.queue(prefix, accountQueueName(singleRedis, "acct"));
    const prioritized = bullKeys.prioritized(queueKey);
    await connection.zadd(prioritized, 3 * 2 ** 32 + 7, "bulk-old", 3 * 2 ** 32 + 9, "bulk-new");
    const gate = await warmGate(connection, prefix, 0);
    const high = await Promise.all(
      Array.from({ length: HIGH_LANE_RUN_CAP + 1 }, () =>
        gate.reserve("acct", 50, 1, undefined, { lane: "urgent", queueKey }),
      ),
    );
    expect(high.slice(0, HIGH_LANE_RUN_CAP).every((r) => r.reserved)).toBe(true);
    expect(high[HIGH_LANE_RUN_CAP]).toEqual({ reserved: false, yielded: true });
    expect(await connection.zrange(prioritized, 0, "0")).toEqual(["bulk-old"]);
    expect(Number(await connection.zscore(prioritized, "bulk-old"))).toBe(0);
    // Until the bulk job comes, lookups and urgent requests wait; then it takes the slot.
    const waiting = await gate.reserve("acct", 50, 1, undefined, { lane: "lookup", queueKey });
    expect(waiting.reserved).toBe(false);
    await connection.zrem(prioritized, "bulk-old");
    let bulk: Reservation;
    do {
      bulk = await gate.reserve("acct", 50, 1, undefined, { lane: "bulk", queueKey });
      if (!bulk.reserved)
        await new Promise((r) => setTimeout(r, "retryInMs" in bulk ? bulk.retryInMs : 5));
    } while (!bulk.reserved);
  });
});

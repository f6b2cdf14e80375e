import { describe, expect, it } from "vitest";
import {
  MAX_RESERVE_AHEAD_MS,
  RateGate,
  type Reservation,
} from "../../src/processors/rate-gate.js";
import { batchKeys, keyspace } from "../../src/redis/keys.js";
import { useTestRedis } from "../helpers/redis.js";

const redis = useTestRedis("gate");
const delayOf = (r: Reservation): number => {
  if (!r.reserved) throw new Error(`not reserved: ${JSON.stringify(r)}`);
  return r.delayMs;
};

describe("RateGate", () => {
  it("gives concurrent requests one slot each, evenly spaced, in the order they asked", async () => {
    const gate = new RateGate(redis.connect(), `${redis.prefix}:a`, 0);
    // 50 per second: a slot every 20 ms.
    const asked = performance.now();
    const delays = (
      await Promise.all(Array.from({ length: 12 }, () => gate.reserve("acct", 50)))
    ).map(delayOf);
    const elapsed = performance.now() - asked;
    expect(delays[0]).toBeLessThan(1);
    // The first request leaves alone and the other eleven together in the next call, whose
    // delays count from a clock that has moved on by at most the time all of this took (and
    // from a schedule Redis stores to the microsecond).
    const first = (delays[1] as number) - (delays[0] as number);
    expect(first).toBeGreaterThan(20 - elapsed);
    expect(first).toBeLessThanOrEqual(20.001);
    for (let i = 2; i < delays.length; i += 1) {
      expect((delays[i] as number) - (delays[i - 1] as number)).toBeCloseTo(20, 2);
    }
  });

  it("counts the margin and the weight into the spacing", async () => {
    const gate = new RateGate(redis.connect(), `${redis.prefix}:b`, 100);
    // (1000 + 100) / 10 = 110 ms a slot; the first takes two. The first request leaves alone,
    // the other two together, as in the test above.
    const asked = performance.now();
    const [a, b, c] = (
      await Promise.all([
        gate.reserve("acct", 10, 2),
        gate.reserve("acct", 10),
        gate.reserve("acct", 10),
      ])
    ).map(delayOf);
    const elapsed = performance.now() - asked;
    expect(a).toBeLessThan(1);
    expect(b).toBeGreaterThan(220 - elapsed);
    expect(b).toBeLessThanOrEqual(220.05);
    expect((c as number) - (b as number)).toBeCloseTo(110, 2);
  });

  it("refuses a request of a cancelled batch without taking its slot, and serves the others", async () => {
    const connection = redis.connect();
    const batchKey = batchKeys(keyspace(redis.prefix), "acct", "gone").meta;
    await connection.hset(batchKey, "state", "cancelled");
    const live = batchKeys(keyspace(redis.prefix), "acct", "live").meta;
    await connection.hset(live, "state", "running");
    const gate = new RateGate(connection, `${redis.prefix}:c`, 0);
    const answers = await Promise.all([
      gate.reserve("acct", 50, 1, live),
      gate.reserve("acct", 50, 1, batchKey),
      gate.reserve("acct", 50, 1, live),
      gate.reserve("acct", 50, 1, batchKey),
      gate.reserve("acct", 50),
    ]);
    expect(answers[1]).toEqual({ reserved: false, cancelled: true });
    expect(answers[3]).toEqual({ reserved: false, cancelled: true });
    const served = [answers[0], answers[2], answers[4]].map((r) => delayOf(r as Reservation));
    expect((served[2] as number) - (served[1] as number)).toBeLessThanOrEqual(20.001);
    expect(served[2]).toBeLessThan(41);
  });

  it("tells a request whose slot would be more than a second away when to ask again", async () => {
    const gate = new RateGate(redis.connect(), `${redis.prefix}:d`, 0);
    // 2 per second: slots at 0, 500 and 1000 ms are within reach, the fourth is not.
    const asked = performance.now();
    const answers = await Promise.all(Array.from({ length: 4 }, () => gate.reserve("acct", 2)));
    const elapsed = performance.now() - asked;
    expect(answers.slice(0, 3).every((r) => r.reserved)).toBe(true);
    const last = answers[3] as Reservation;
    expect(last.reserved).toBe(false);
    expect("retryInMs" in last && last.retryInMs).toBeGreaterThan(500 - elapsed - 1);
    expect("retryInMs" in last && last.retryInMs).toBeLessThanOrEqual(
      1500 - MAX_RESERVE_AHEAD_MS + 1,
    );
  });

  it("keeps accounts apart", async () => {
    const gate = new RateGate(redis.connect(), `${redis.prefix}:e`, 0);
    const [a, b] = (await Promise.all([gate.reserve("one", 1), gate.reserve("two", 1)])).map(
      delayOf,
    );
    expect(a).toBeLessThan(1);
    expect(b).toBeLessThan(1);
  });

  it("spaces a fast account's slots by the whole interval when each is reserved in a call of its own", async () => {
    const gate = new RateGate(redis.connect(), `${redis.prefix}:f`, 40);
    // 3,000 per second: a slot every 1040 / 3000 = 0.3467 ms. The first request takes 60 slots,
    // so every later one is reserved from the stored schedule, not from Redis's clock.
    const interval = 1040 / 3000;
    expect((await gate.reserve("fast", 3000, 60)).reserved).toBe(true);
    const at: number[] = [];
    for (let i = 0; i < 60; i += 1) {
      const slot = await gate.reserve("fast", 3000);
      if (!slot.reserved) throw new Error(`not reserved: ${JSON.stringify(slot)}`);
      at.push(slot.at);
    }
    for (let i = 1; i < at.length; i += 1)
      expect((at[i] as number) - (at[i - 1] as number)).toBeGreaterThanOrEqual(interval - 0.001);
  });
});

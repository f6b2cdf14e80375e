import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { CLEARANCE_SPARE_MS, RateGate, type Reservation } from "../../src/processors/rate-gate.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import { createRedis } from "../../src/redis/connection.js";
import { type DelayProxy, startDelayProxy } from "../helpers/delay-proxy.js";
import { useTestRedis } from "../helpers/redis.js";

// The gate reaching Redis through a proxy that holds every reply back 25 ms.
const REPLY_DELAY_MS = 25;
const redis = useTestRedis("gatelatency");
let proxy: DelayProxy | undefined;
const far = () => {
  const connection = createRedis((proxy as DelayProxy).url, createLogger("silent"), "test");
  opened.push(connection);
  return connection;
};
const opened: ReturnType<typeof createRedis>[] = [];
beforeAll(async () => {
  proxy = await startDelayProxy(redis.url, REPLY_DELAY_MS);
});
afterAll(async () => {
  await Promise.allSettled(opened.map((c) => c.quit()));
  await proxy?.close();
});

const reserved = (r: Reservation) => {
  if (!r.reserved) throw new Error(`not reserved: ${JSON.stringify(r)}`);
  return r;
};

describe("RateGate with Redis a round trip of 25 ms away", () => {
  it("clears only the slots a round trip away or more, a round trip and a spare before they leave", async () => {
    const gate = new RateGate(far(), `${redis.prefix}:clear`, 40);
    // One call measures the round trip.
    reserved(await gate.reserve("other", 50));
    const roundTrip = gate.roundTripMs();
    expect(roundTrip).toBeGreaterThanOrEqual(REPLY_DELAY_MS);
    // 50 a second with a 40 ms margin: slots 20.8 ms apart, the first now.
    const slots = (
      await Promise.all(Array.from({ length: 8 }, () => gate.reserve("acct", 50)))
    ).map(reserved);
    const cleared = slots.filter((s) => s.clearAt !== undefined);
    const near = slots.filter((s) => s.clearAt === undefined);
    expect(near.length).toBeGreaterThanOrEqual(1);
    expect(cleared.length).toBeGreaterThanOrEqual(1);
    for (const s of cleared) {
      const lead = s.leaveAt - (s.clearAt as number);
      expect(lead).toBeGreaterThanOrEqual(REPLY_DELAY_MS + CLEARANCE_SPARE_MS);
      expect(s.delayMs).toBeGreaterThanOrEqual(lead);
    }
    const nearest = Math.min(...cleared.map((s) => s.leaveAt - (s.clearAt as number)));
    for (const s of near) expect(s.delayMs).toBeLessThan(nearest + 1);
  });

  it("gives a request that records 'sent' a slot far enough ahead to clear it, and clears it in time", async () => {
    const connection = far();
    const prefix = `${redis.prefix}:sent`;
    const gate = new RateGate(connection, prefix, 40);
    reserved(await gate.reserve("other", 50));
    const sentKey = bullKeys.job(`${prefix}:q`, "job-1");
    // The account's schedule is idle: without "sent" to record, the slot would be now.
    const slot = reserved(await gate.reserve("acct", 50, 1, undefined, { sentKey }));
    expect(slot.delayMs).toBeGreaterThanOrEqual(REPLY_DELAY_MS + CLEARANCE_SPARE_MS);
    expect(slot.clearAt).toBeDefined();
    await sleep(Math.max(0, (slot.clearAt as number) - performance.now()));
    expect(await gate.clear("acct", slot.at, false, { sentKey })).toEqual({ clear: true });
    expect(await connection.exists(sentKey)).toBe(1);
  });
});

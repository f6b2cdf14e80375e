import { describe, expect, it } from "vitest";
import type { OutflowCheck } from "../../src/outflow/outflow-check.js";
import { HOUR_MS } from "../../src/outflow/velocity-limits.js";
import { RateGate, type Reservation } from "../../src/processors/rate-gate.js";
import { useTestRedis } from "../helpers/redis.js";

// The rate gate's script counts payouts in their velocity logs as it reserves their slots.
// Requests asked for at once leave in one script call (the first alone, the rest together):
// each request's logs are named among the keys of the whole call.
const redis = useTestRedis("velocitygate");

const payout = (jobId: string, units: number, limits: OutflowCheck["limits"]) => ({
  outflow: { jobId, currency: "NGN", units, limits },
});
const perHour = (maxUnits: number, maxCount: number) => ({
  scope: "currency" as const,
  windowMs: HOUR_MS,
  maxUnits,
  maxCount,
});
const causeOf = (r: Reservation) =>
  r.reserved ? "reserved" : "outflowHeld" in r ? r.outflowHeld.cause : JSON.stringify(r);

describe("velocity limits in the rate gate's script", () => {
  it("lets exactly the limit's count through among requests gathered into one call, each counted once", async () => {
    const gate = new RateGate(redis.connect(), `${redis.prefix}:count`, 0);
    const asked = Array.from({ length: 8 }, (_, i) =>
      gate.reserve("acct", 1000, 1, undefined, payout(`j_${i}`, 100, [perHour(-1, 3)])),
    );
    const answers = (await Promise.all(asked)).map(causeOf);
    expect(answers.filter((a) => a === "reserved")).toHaveLength(3);
    expect(answers.filter((a) => a === "velocity")).toHaveLength(5);
    // The first three asked are the three counted; asking again, one of them is not held by
    // its own count, and the others still are.
    expect(answers.slice(0, 3)).toEqual(["reserved", "reserved", "reserved"]);
    const again = await Promise.all([
      gate.reserve("acct", 1000, 1, undefined, payout("j_0", 100, [perHour(-1, 3)])),
      gate.reserve("acct", 1000, 1, undefined, payout("j_5", 100, [perHour(-1, 3)])),
    ]);
    expect(again.map(causeOf)).toEqual(["reserved", "velocity"]);
  });

  it("keeps every limit of every request apart in one call: an amount and a count, two currencies' logs", async () => {
    const gate = new RateGate(redis.connect(), `${redis.prefix}:mixed`, 0);
    const limits = [perHour(250, -1), { ...perHour(-1, 10), windowMs: 2 * HOUR_MS }];
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        gate.reserve("acct", 1000, 1, undefined, {
          outflow: {
            jobId: `j_${i}`,
            currency: i % 2 === 0 ? "NGN" : "KES",
            units: 100,
            limits,
          },
        }),
      ),
    );
    // 250 units an hour in each currency: two payouts of 100 each, per currency.
    expect(answers.map(causeOf)).toEqual([
      "reserved",
      "reserved",
      "reserved",
      "reserved",
      "velocity",
      "velocity",
    ]);
    const held = answers[4] as Extract<Reservation, { outflowHeld: unknown }>;
    expect(held.outflowHeld).toMatchObject({ cause: "velocity", began: "currency" });
    // Each is the first held in its currency, so each begins that currency's hold.
    expect((answers[5] as Extract<Reservation, { outflowHeld: unknown }>).outflowHeld).toEqual(
      expect.objectContaining({ began: "currency" }),
    );
  });
});

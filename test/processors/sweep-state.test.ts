import { describe, expect, it } from "vitest";
import { SWEEP_LEASE_MS, SweepState } from "../../src/processors/sweep-state.js";
import { keyspace, sweepKeys } from "../../src/redis/keys.js";
import { useTestRedis } from "../helpers/redis.js";

// The reconciliation sweep's lease on its account, on a real Redis: a sweep that runs longer
// than a third of the lease renews it, and goes on only while the renewal holds.
const redis = useTestRedis("sweep-lease");

describe("a sweep's lease", () => {
  it("is renewed by its holder, to the full lease again", async () => {
    const connection = redis.connect();
    const space = keyspace(redis.prefix);
    const state = new SweepState(connection, space, "acct_a");
    expect(await state.lock()).toBe(true);
    const { lock } = sweepKeys(space, "acct_a");
    await connection.pexpire(lock, 1_000);
    expect(await state.renew()).toBe(true);
    expect(await connection.pttl(lock)).toBeGreaterThan(1_000);
    expect(await connection.pttl(lock)).toBeLessThanOrEqual(SWEEP_LEASE_MS);
  });

  it("is not renewed by another process, nor once it lapsed", async () => {
    const connection = redis.connect();
    const space = keyspace(redis.prefix);
    const holder = new SweepState(connection, space, "acct_b");
    const other = new SweepState(connection, space, "acct_b");
    expect(await holder.lock()).toBe(true);
    expect(await other.lock()).toBe(false);
    expect(await other.renew()).toBe(false);
    await connection.del(sweepKeys(space, "acct_b").lock);
    expect(await holder.renew()).toBe(false);
  });
});

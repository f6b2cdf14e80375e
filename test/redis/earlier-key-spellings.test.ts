import { Queue } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { RateGate } from "../../src/processors/rate-gate.js";
import { AccountPauses, migrateLegacyPauses } from "../../src/queues/account-pauses.js";
import { IdempotencyKeyReusedError } from "../../src/queues/enqueue-error.js";
import { jobIdFor } from "../../src/queues/idempotency-key.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { Producer } from "../../src/queues/producer.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { requestFingerprint } from "../../src/queues/request-fingerprint.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import {
  accountPauseKey,
  fingerprintKey,
  keyspace,
  legacyJobKeys,
  resultMarkerKey,
} from "../../src/redis/keys.js";
import type { JobResult } from "../../src/results/job-result.js";
import { ResultsStore } from "../../src/results/results-store.js";
import { bankJob } from "../fixtures/batches.js";
import { singleRedis, useTestRedis } from "../helpers/redis.js";

// A Redis an earlier release wrote: markers and fingerprints without the account, pauses in
// one hash. What it recorded must still hold after the upgrade.
const redis = useTestRedis("earlier");
const RETENTION_MS = 3_600_000;
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.allSettled(opened.map((o) => o.close()));
});

const payout = (key: string, amount: number): JobInput =>
  bankJob({ account: "alpha", idempotencyKey: key }, { amount }) as JobInput;

function resultOf(key: string, finishedAt: string): JobResult {
  return {
    jobId: jobIdFor("alpha", key),
    kind: "payout.bank",
    account: "alpha",
    idempotencyKey: key,
    result: "succeeded",
    attempts: 1,
    enqueuedAt: "2026-11-22T00:00:00.000Z",
    finishedAt,
    durationMs: 1,
  };
}

function partsOn(prefix: string) {
  const connection = redis.connect();
  const results = new ResultsStore(connection, { prefix, retentionMs: RETENTION_MS, maxLen: 100 });
  const producer = new Producer({
    connection,
    prefix,
    accounts: ["alpha"],
    maxAttempts: 3,
    retentionMs: RETENTION_MS,
  });
  opened.push(producer);
  return { connection, results, producer };
}

describe("a result marker an earlier release wrote without the account", () => {
  it("still makes the job's result final: not emitted again, read, and forgotten by a replay", async () => {
    const prefix = `${redis.prefix}:marker`;
    const { connection, results } = partsOn(prefix);
    const earlier = resultOf("k-1", "2026-11-22T00:00:01.000Z");
    const legacy = legacyJobKeys.resultMarker(keyspace(prefix), "alpha", earlier.jobId);
    await connection.set(legacy, JSON.stringify(earlier), "PX", RETENTION_MS);

    expect(await results.emit(resultOf("k-1", "2026-11-22T00:00:02.000Z"))).toBe(false);
    expect(await connection.xlen(results.streamKey("alpha"))).toBe(0);
    expect(await results.get("alpha", earlier.jobId)).toEqual(earlier);
    expect(await connection.exists(resultMarkerKey(keyspace(prefix), "alpha", earlier.jobId))).toBe(
      0,
    );

    const recorded = (await results.recorded("alpha", earlier.jobId)) as string;
    expect(await results.forget("alpha", earlier.jobId, recorded)).toBe(true);
    expect(await connection.exists(legacy)).toBe(0);
    expect(await results.emit(resultOf("k-1", "2026-11-22T00:00:03.000Z"))).toBe(true);
    expect(await connection.exists(legacy)).toBe(0);
    expect((await results.get("alpha", earlier.jobId))?.finishedAt).toBe(
      "2026-11-22T00:00:03.000Z",
    );
  });
});

describe("a fingerprint an earlier release wrote without the account", () => {
  it("still refuses a different request under the key, and replays the same one", async () => {
    const prefix = `${redis.prefix}:fp`;
    const { connection, producer } = partsOn(prefix);
    const first = payout("k-2", 150);
    const jobId = jobIdFor("alpha", "k-2");
    // The job is gone; its result marker and fingerprint remain, both spelled the old way.
    await connection.set(
      legacyJobKeys.resultMarker(keyspace(prefix), "alpha", jobId),
      JSON.stringify(resultOf("k-2", "2026-11-22T00:00:01.000Z")),
      "PX",
      RETENTION_MS,
    );
    await connection.set(
      legacyJobKeys.fingerprint(keyspace(prefix), "alpha", jobId),
      requestFingerprint(producer.envelopeOf(first)),
      "PX",
      2 * RETENTION_MS,
    );

    expect(await producer.keyUses([producer.envelopeOf(payout("k-2", 999))])).toEqual([
      "different",
    ]);
    await expect(producer.enqueue(payout("k-2", 999))).rejects.toBeInstanceOf(
      IdempotencyKeyReusedError,
    );
    expect(await producer.fingerprinted("alpha", [jobId])).toEqual([true]);
    expect(await producer.enqueueKeyed(first)).toMatchObject({ replayed: true });
    // The replay stored the fingerprint under the account's key, the full time.
    expect(await connection.pttl(fingerprintKey(keyspace(prefix), "alpha", jobId))).toBeGreaterThan(
      RETENTION_MS,
    );
  });

  it("is carried to the account's key when the job's result is recorded", async () => {
    const prefix = `${redis.prefix}:carry`;
    const { connection, results } = partsOn(prefix);
    const jobId = jobIdFor("alpha", "k-3");
    await connection.set(
      legacyJobKeys.fingerprint(keyspace(prefix), "alpha", jobId),
      "fp-of-k-3",
      "PX",
      60_000,
    );
    expect(await results.emit(resultOf("k-3", "2026-11-22T00:00:01.000Z"))).toBe(true);
    const moved = fingerprintKey(keyspace(prefix), "alpha", jobId);
    expect(await connection.get(moved)).toBe("fp-of-k-3");
    expect(await connection.pttl(moved)).toBeGreaterThan(RETENTION_MS);
  });
});

describe("pauses an earlier release kept in one hash", () => {
  it("are moved to each account's key at start, once, and hold the account's requests", async () => {
    const prefix = `${redis.prefix}:pauses`;
    const connection: RedisConnection = redis.connect();
    const legacy = legacyJobKeys.pausedAccounts(prefix);
    const alphaPause = { account: "alpha", reason: "operator", pausedAt: "2026-11-22T00:00:00Z" };
    const betaPause = { account: "beta", reason: "key refused", pausedAt: "2026-11-22T00:00:00Z" };
    const betaNow = { account: "beta", reason: "operator", pausedAt: "2026-11-23T00:00:00Z" };
    await connection.hset(legacy, "alpha", JSON.stringify(alphaPause));
    await connection.hset(legacy, "beta", JSON.stringify(betaPause));
    // beta was paused again since, under its own key: that pause wins.
    await connection.set(accountPauseKey(keyspace(prefix), "beta"), JSON.stringify(betaNow));

    expect(await migrateLegacyPauses(connection, prefix)).toBe(1);
    expect(await connection.exists(legacy)).toBe(0);
    expect(await migrateLegacyPauses(connection, prefix)).toBe(0);

    const queues = new Map(
      ["alpha", "beta", "gamma"].map((a) => [
        a,
        new Queue(accountQueueName(singleRedis, a), { connection, prefix }),
      ]),
    );
    opened.push(...[...queues.values()]);
    const pauses = new AccountPauses(connection, prefix, queues);
    expect(await pauses.list()).toEqual([alphaPause, betaNow]);

    const gate = new RateGate(connection, prefix, 0);
    expect(await gate.reserve("alpha", 50)).toEqual({ reserved: false, held: true });
    expect(await gate.reserve("gamma", 50)).toMatchObject({ reserved: true });
    await pauses.resume("alpha");
    expect(await gate.reserve("alpha", 50)).toMatchObject({ reserved: true });
    expect(await pauses.list()).toEqual([betaNow]);
  });
});

import type { ChildProcess } from "node:child_process";
import { Queue } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { Producer } from "../../src/queues/producer.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { payoutBatch } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { shareTurn } from "../helpers/shared-turn.js";
import { waitUntil } from "../helpers/wait-until.js";

// moneyq may send 10 a second; the provider allows 8 and answers the ninth 429 with
// Retry-After: 2. Requests leave 104 ms apart, so the pause must reach the other process
// (and the requests already given a slot) within one slot to hold.
const KEY = "sk_sandbox_shared_pause_001";
const JOBS = 20;
const redis = useTestRedis("pause");
const sandbox = useSandboxProcess(["--settle-delay-ms", "20"]);
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) {
    c.kill("SIGTERM");
    await exitOf(c);
  }
});

describe("a 429 with Retry-After pauses the account everywhere", () => {
  it("two worker processes: no request of the account reaches the provider inside the two seconds", async () => {
    await sandbox.addAccount("acct_paused", KEY, {
      rateLimitPerSecond: 8,
      rateLimitRetryAfterSeconds: 2,
    });
    const env = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sandbox.baseUrl,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "paused", apiKey: KEY, ratePerSecond: 10, concurrency: 8 },
      ]),
    };
    const workers = [await spawnWorker(env), await spawnWorker(env)];
    children.push(...workers.map((w) => w.child));
    const connection = redis.connect();
    const producer = new Producer({
      connection,
      prefix: redis.prefix,
      accounts: ["paused"],
      maxAttempts: 8,
      retentionMs: 3_600_000,
    });
    await producer.enqueueMany(payoutBatch("pause", JOBS, "paused"));
    const urls = workers.map((w) => w.metricsUrl);
    expect(await shareTurn(connection, redis.prefix, "paused", urls), "both serve").toBe(true);
    await waitUntil(
      async () =>
        (await connection.xlen(
          resultsStreamKey(keyspace(redis.prefix, connection.isCluster), "paused"),
        )) >= JOBS,
      150_000,
      "every result",
    );
    await producer.close();

    const log = await sandbox.requests("acct_paused");
    const refused = log.filter((r) => r.rateLimited);
    expect(refused.length, "the provider's limit was hit").toBeGreaterThanOrEqual(2);
    const inside = refused.flatMap((r) =>
      log.filter((other) => other.seq > r.seq && other.at < r.at + 2000),
    );
    expect(inside).toEqual([]);
  }, 200_000);

  it("a 429 with Retry-After: 0 pauses a moment: every job ends succeeded, none is failed", async () => {
    const key = "sk_sandbox_retry_at_once_01";
    await sandbox.addAccount("acct_at_once", key, {
      rateLimitPerSecond: 4,
      rateLimitRetryAfterSeconds: 0,
    });
    const env = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sandbox.baseUrl,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "at-once", apiKey: key, ratePerSecond: 20, concurrency: 4 },
      ]),
    };
    const worker = await spawnWorker(env);
    children.push(worker.child);
    const connection = redis.connect();
    const producer = new Producer({
      connection,
      prefix: redis.prefix,
      accounts: ["at-once"],
      maxAttempts: 2,
      retentionMs: 3_600_000,
    });
    const jobs = 12;
    await producer.enqueueMany(payoutBatch("at-once", jobs, "at-once"));
    const space = keyspace(redis.prefix, connection.isCluster);
    // On one Redis every account's results share a stream: this account's are read out of it.
    const results = async () =>
      (await connection.xrange(resultsStreamKey(space, "at-once"), "-", "+"))
        .map(([, fields]) => JSON.parse(fields[fields.indexOf("result") + 1] as string))
        .filter((r) => r.account === "at-once")
        .map((r) => r.result);
    await waitUntil(async () => (await results()).length >= jobs, 60_000, "every result");
    await producer.close();
    const queue = new Queue(accountQueueName(space, "at-once"), {
      connection,
      prefix: redis.prefix,
    });
    const failed = await queue.getFailedCount();
    await queue.close();

    expect(await results()).toEqual(Array(jobs).fill("succeeded"));
    expect(failed).toBe(0);
    const log = await sandbox.requests("acct_at_once");
    expect(log.filter((r) => r.rateLimited).length, "the provider's limit was hit").toBeGreaterThan(
      2,
    );
  }, 120_000);
});

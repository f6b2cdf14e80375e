import { Queue, Worker } from "bullmq";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Config, loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { jobIdFor } from "../../src/queues/idempotency-key.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { JobResult } from "../../src/results/job-result.js";
import { type RunningWorkers, startWorkers } from "../../src/service/start-workers.js";
import { BANK_PAYOUT_BODY } from "../fixtures/batches.js";
import { singleRedis, useTestRedis } from "../helpers/redis.js";
import { useSandbox } from "../helpers/sandbox.js";
import { until } from "../helpers/service.js";

const KEY = "sk_sandbox_sent_before_0001";
const sb = useSandbox({
  settleDelayMs: 20,
  accounts: [{ accountId: "acct_sent_before", apiKey: KEY }],
});
const redis = useTestRedis("sentbefore");
let config: Config;
let connection: RedisConnection;
let queue: Queue;
let workers: RunningWorkers | undefined;

beforeAll(() => {
  config = loadConfig({
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sb.sandbox.baseUrl,
    MONEYQ_ACCOUNTS: JSON.stringify([{ alias: "alpha", apiKey: KEY, concurrency: 2 }]),
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_LOG_LEVEL: "silent",
  });
  connection = redis.connect();
  queue = new Queue(accountQueueName(singleRedis, "alpha"), {
    connection,
    prefix: config.redisPrefix,
  });
});
afterAll(async () => {
  await workers?.close();
  await queue?.close();
});

/** A key an older release accepted and today's rule refuses (a space). */
function envelope(key: string) {
  return {
    kind: "payout.bank",
    account: "alpha",
    idempotencyKey: key,
    request: { body: { ...BANK_PAYOUT_BODY } },
  };
}

async function resultOf(jobId: string): Promise<JobResult> {
  const found = await until(
    async () =>
      (await connection.xrange(resultsStreamKey(keyspace(config.redisPrefix), "any"), "-", "+"))
        .map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)))
        .filter((r) => r.jobId === jobId),
    (results) => results.length > 0,
    20_000,
  );
  return found[0] as JobResult;
}

describe("a job whose earlier attempt may have been sent", () => {
  it("ends needs_reconciliation, never rejected, when its key fails today's rule", async () => {
    const key = "pay 1";
    const jobId = jobIdFor("alpha", key);
    await queue.add(
      "payout.bank",
      { envelope: envelope(key) },
      // The retry waits, so the older worker below makes exactly one attempt.
      { jobId, attempts: 3, backoff: { type: "fixed", delay: 1_500 } },
    );
    // The older release: its first attempt timed out after sending (the payout may be made).
    const older = new Worker(
      accountQueueName(singleRedis, "alpha"),
      async () => {
        throw new Error("withdrawToBank: timed out waiting for the answer");
      },
      { connection: redis.connect(), prefix: config.redisPrefix, autorun: true },
    );
    await until(
      async () => (await queue.getJob(jobId))?.attemptsMade ?? 0,
      (made) => made >= 1,
      10_000,
    );
    await older.close();
    workers = await startWorkers({
      config,
      connection,
      logger: createLogger("silent"),
      registry: new Registry(),
    });
    const result = await resultOf(jobId);
    expect(result).toMatchObject({
      result: "needs_reconciliation",
      code: "invalid_request",
      attempts: 2,
    });
    expect(result.message).toMatch(/^idempotencyKey: /);
    expect(result.message).toContain("an earlier attempt may have been");
  }, 30_000);

  it("a job already looking its outcome up is not rejected either", async () => {
    const key = "pay 2";
    const jobId = jobIdFor("alpha", key);
    await queue.add(
      "payout.bank",
      {
        envelope: envelope(key),
        state: { phase: "reconcile", pendingSince: Date.now() },
      },
      { jobId, attempts: 3 },
    );
    workers ??= await startWorkers({
      config,
      connection,
      logger: createLogger("silent"),
      registry: new Registry(),
    });
    expect(await resultOf(jobId)).toMatchObject({
      result: "needs_reconciliation",
      code: "invalid_request",
    });
  }, 30_000);

  it("a job never sent is still rejected naming the key", async () => {
    const key = "pay 3";
    const jobId = jobIdFor("alpha", key);
    await queue.add("payout.bank", { envelope: envelope(key) }, { jobId, attempts: 3 });
    workers ??= await startWorkers({
      config,
      connection,
      logger: createLogger("silent"),
      registry: new Registry(),
    });
    const result = await resultOf(jobId);
    expect(result).toMatchObject({ result: "rejected", code: "validation_error", attempts: 1 });
    expect(result.message).toMatch(/^idempotencyKey: /);
  }, 30_000);
});

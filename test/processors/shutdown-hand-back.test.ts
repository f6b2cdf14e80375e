import { Queue } from "bullmq";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentsConnectionError } from "../../src/client/errors.js";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { Producer } from "../../src/queues/producer.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { JobResult } from "../../src/results/job-result.js";
import { startWorkers } from "../../src/service/start-workers.js";
import { singleRedis, useTestRedis } from "../helpers/redis.js";
import { type ScriptedServer, startScriptedServer } from "../helpers/scripted-server.js";
import { until } from "../helpers/service.js";

const KEY = "sk_sandbox_hand_back_0001";
const redis = useTestRedis("handback");
let upstream: ScriptedServer;
let connection: RedisConnection;

beforeAll(async () => {
  upstream = await startScriptedServer();
  upstream.reply({ hang: true });
  connection = redis.connect();
});
afterAll(async () => {
  await upstream.close();
});

describe("a client closed by the shutdown", () => {
  it("refuses a later call as never sent, and sends nothing", async () => {
    const client = new PaymentsClient({ baseUrl: upstream.baseUrl, apiKey: KEY });
    await client.destroy();
    const error = await client.createWallet({ body: { currency: "ZAR" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsConnectionError);
    expect(error).toMatchObject({ mayHaveReachedServer: false });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe("jobs still waiting for their rate slot when the grace period ends", () => {
  it("go back to the queue unsent, with no attempt used and no result", async () => {
    const prefix = `${redis.prefix}-slots`;
    const config = loadConfig({
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: upstream.baseUrl,
      PAYMENTS_API_KEY: KEY,
      MONEYQ_REDIS_PREFIX: prefix,
      MONEYQ_LOG_LEVEL: "silent",
      // One request leaves at once; the others wait for slots spread over the next seconds.
      MONEYQ_RATE_LIMIT_PER_SECOND: "4",
      MONEYQ_CONCURRENCY: "6",
      MONEYQ_SHUTDOWN_GRACE_MS: "300",
      MONEYQ_REQUEST_TIMEOUT_MS: "600000",
    });
    const producer = new Producer({
      connection,
      prefix,
      accounts: ["default"],
      maxAttempts: 3,
      retentionMs: 60_000,
    });
    const queue = new Queue(accountQueueName(singleRedis, "default"), { connection, prefix });
    const sentBefore = upstream.requests.length;
    const workers = await startWorkers({
      config,
      connection,
      logger: createLogger("silent"),
      registry: new Registry(),
    });
    try {
      // Not idempotent: a request that may have reached the provider is never resent.
      const jobs = await producer.enqueueMany(
        Array.from({ length: 6 }, (_, i) => ({
          kind: "wallet.create" as const,
          account: "default",
          idempotencyKey: `hand-back-${i}`,
          request: { body: { currency: "ZAR" as const } },
        })),
      );
      await until(
        async () => upstream.requests.length - sentBefore,
        (n) => n >= 1,
        10_000,
      );
      await workers.close();
      const sent = upstream.requests.length - sentBefore;
      expect(sent).toBeLessThan(jobs.length);
      const results = (
        await connection.xrange(resultsStreamKey(keyspace(prefix), "any"), "-", "+")
      ).map(([, f]) => JobResult.parse(JSON.parse(f[1] as string)));
      // Only a request that left may end with its outcome unknown.
      expect(results.length).toBeLessThanOrEqual(sent);
      for (const r of results) expect(r.code).toBe("outcome_unknown");
      const back = await until(
        async () => queue.getJobs(["wait", "prioritized"]),
        (found) => found.length >= jobs.length - sent,
        10_000,
      );
      expect(back).toHaveLength(jobs.length - sent);
      for (const job of back) {
        expect(job.attemptsMade).toBe(0);
        expect(job.data.state?.sentAt).toBeUndefined();
      }
    } finally {
      await workers.close();
      await queue.close();
      await producer.close();
    }
  }, 30_000);
});

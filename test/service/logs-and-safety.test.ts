import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { checkRedisSafety } from "../../src/redis/safety.js";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { startService, UnsafeRedisError } from "../../src/service/start-service.js";
import { startWorkers } from "../../src/service/start-workers.js";
import { payoutBatch } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitUntil } from "../helpers/wait-until.js";
import { startPrivateServer } from "../setup/resolve-redis.js";

const p = usePipeline(
  { MONEYQ_MAX_ATTEMPTS: "3" },
  {
    startWorkers: false,
    sandboxAccounts: [
      { accountId: "acct_demo", apiKey: DEMO_API_KEY, faults: { errorRate: 0.3, seed: 2 } },
    ],
  },
);

function memoryLog() {
  const lines: Record<string, unknown>[] = [];
  let raw = "";
  return {
    lines,
    raw: () => raw,
    stream: {
      write(chunk: string) {
        raw += chunk;
        lines.push(JSON.parse(chunk));
      },
    },
  };
}

describe("logs", () => {
  it("write one structured line per state change of a job, and never the API key", async () => {
    const log = memoryLog();
    const logger = createLogger("info", log.stream);
    const workers = await startWorkers({
      config: p.config(),
      connection: p.connection(),
      logger,
      registry: new Registry(),
    });
    try {
      const jobs = payoutBatch("logs", 5);
      const enqueued = await p.producer().enqueueMany(jobs as JobInput[]);
      await p.waitForResults(5);
      // A job's last line is written just after its result is recorded.
      await waitUntil(
        async () =>
          enqueued.every((e) =>
            log.lines.some((l) => l.jobId === e.jobId && l.msg === "job finished"),
          ),
        5_000,
        "each job's line saying it finished",
      );
      for (const { jobId, idempotencyKey } of enqueued) {
        const mine = log.lines.filter((l) => l.jobId === jobId);
        expect(mine.length).toBeGreaterThanOrEqual(2);
        for (const line of mine) {
          expect(line).toMatchObject({
            jobId,
            key: idempotencyKey,
            kind: "payout.bank",
            account: "default",
            attempt: expect.any(Number),
            outcome: expect.any(String),
          });
        }
        expect(mine.at(-1)).toMatchObject({ msg: "job finished", outcome: "succeeded" });
      }
      expect(new Set(log.lines.map((l) => l.outcome))).toEqual(
        new Set([undefined, "pending", "retry", "succeeded"]),
      );
    } finally {
      await workers.close();
    }
    expect(log.raw()).not.toContain(DEMO_API_KEY);
  });

  it("censor keys and secrets wherever they appear in a logged object", () => {
    const log = memoryLog();
    const logger = createLogger("info", log.stream);
    logger.info(
      {
        apiKey: "k1",
        account: { apiKey: "k2" },
        webhook: { secret: "s1" },
        headers: { "x-api-key": "k3" },
      },
      "x",
    );
    expect(log.raw()).not.toMatch(/k1|k2|k3|s1/);
    expect(log.lines[0]).toMatchObject({ apiKey: "[REDACTED]", account: { apiKey: "[REDACTED]" } });
  });
});

const privateRedis = (settings: string[]) => startPrivateServer("redis-server", settings);

describe("Redis safety at start", () => {
  it("names each risk of an unsafe Redis, and refuses to start when MONEYQ_REQUIRE_SAFE_REDIS is set", async () => {
    const unsafe = await privateRedis([
      "--save",
      "",
      "--appendonly",
      "no",
      "--maxmemory-policy",
      "allkeys-lru",
    ]);
    const safe = await privateRedis([
      "--save",
      "",
      "--appendonly",
      "yes",
      "--maxmemory-policy",
      "noeviction",
    ]);
    try {
      const conn = new Redis(unsafe.url);
      const verdict = await checkRedisSafety(conn);
      await conn.quit();
      expect(verdict.safe).toBe(false);
      expect(verdict.warnings).toEqual([
        "maxmemory-policy is allkeys-lru: under memory pressure Redis may evict job keys and jobs can be lost; set it to noeviction",
        "Redis persists nothing (appendonly no, no save points): a Redis restart loses every queued job; enable appendonly",
      ]);
      const env = { ...p.env(), REDIS_URL: unsafe.url };
      const log = memoryLog();
      const service = await startService({
        config: loadConfig(env),
        role: "worker",
        metricsPort: 0,
        logger: createLogger("warn", log.stream),
      });
      await service.close();
      expect(log.lines.map((l) => l.msg)).toEqual(expect.arrayContaining([...verdict.warnings]));
      await expect(
        startService({
          config: loadConfig({ ...env, MONEYQ_REQUIRE_SAFE_REDIS: "1" }),
          role: "worker",
          metricsPort: 0,
          logger: createLogger("silent"),
        }),
      ).rejects.toBeInstanceOf(UnsafeRedisError);

      const safeConn = new Redis(safe.url);
      expect(await checkRedisSafety(safeConn)).toEqual({ safe: true, warnings: [] });
      await safeConn.quit();
      const ok = await startService({
        config: loadConfig({ ...p.env(), REDIS_URL: safe.url, MONEYQ_REQUIRE_SAFE_REDIS: "1" }),
        role: "worker",
        metricsPort: 0,
        logger: createLogger("silent"),
      });
      await ok.close();
      await ok.close();
    } finally {
      await Promise.all([unsafe.stop(), safe.stop()]);
    }
  });
});

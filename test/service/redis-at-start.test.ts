import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { startPrivateRedis } from "../../src/redis/private-redis.js";
import { serviceRedis } from "../../src/redis/service-redis.js";
import { RedisUnavailableError } from "../../src/redis/unavailable-error.js";
import { startService } from "../../src/service/start-service.js";
import { exitOf, runCli, spawnWorker } from "../helpers/cli.js";
import { installed } from "../helpers/installed.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandbox } from "../helpers/sandbox.js";

/** Nothing listens on port 1: a Redis that does not answer, with credentials to keep out of sight. */
const DEAD_REDIS = "redis://:s3cret-pw@127.0.0.1:1";
/** A start waits this long for it (several attempts), not the default 10 s. */
const START_TIMEOUT_MS = "1000";

const sb = useSandbox({ settleDelayMs: 20 });
const redis = useTestRedis("redisstart");

describe("a REDIS_URL that was set and does not answer", () => {
  it("stops the start with an error that names REDIS_URL, in development mode too", async () => {
    for (const extra of [{}, { PAYMENTS_API_URL: "set" }]) {
      const env: Record<string, string> = {
        REDIS_URL: DEAD_REDIS,
        MONEYQ_API_PORT: "0",
        MONEYQ_REDIS_START_TIMEOUT_MS: START_TIMEOUT_MS,
      };
      if ("PAYMENTS_API_URL" in extra) {
        env.PAYMENTS_API_URL = sb.sandbox.baseUrl;
        env.PAYMENTS_API_KEY = sb.sandbox.apiKey;
      }
      const started = startService({ config: loadConfig(env), logger: createLogger("silent") });
      const error = await started.then(
        async (service) => {
          await service.close();
          return new Error(`started on ${service.redisUrl} (embedded: ${service.embeddedRedis})`);
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message).toMatch(
        /^REDIS_URL does not answer: redis:\/\/\*\*\*@127\.0\.0\.1:1 /,
      );
      expect((error as Error).message).not.toContain("s3cret");
    }
  }, 30_000);

  it("the CLI says so in one line, without a stack, also under MONEYQ_REQUIRE_SAFE_REDIS", async () => {
    for (const safe of ["0", "1"]) {
      const { code, stdout, stderr } = await runCli(["start", "--role", "worker"], {
        REDIS_URL: DEAD_REDIS,
        PAYMENTS_API_URL: sb.sandbox.baseUrl,
        PAYMENTS_API_KEY: sb.sandbox.apiKey,
        MONEYQ_REQUIRE_SAFE_REDIS: safe,
        MONEYQ_METRICS_PORT: "0",
        MONEYQ_REDIS_START_TIMEOUT_MS: START_TIMEOUT_MS,
      });
      expect(code).toBe(2);
      expect(stderr).toMatch(
        /^moneyq: REDIS_URL does not answer: redis:\/\/\*\*\*@127\.0\.0\.1:1 /,
      );
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(stderr + stdout).not.toMatch(/persist|workers started|s3cret/);
    }
  }, 60_000);
});

describe("the private redis-server", () => {
  it("stands in only in the embedded development mode", async () => {
    const embedded = await serviceRedis("redis://127.0.0.1:1", "redis-server", "embedded");
    try {
      expect(embedded.embeddedBecause).toBeDefined();
      expect(embedded.url).not.toBe("redis://127.0.0.1:1");
    } finally {
      await embedded.stop();
    }
    for (const source of ["REDIS_URL", "default", "require-safe"] as const) {
      const error = await serviceRedis("redis://127.0.0.1:1", "redis-server", source).then(
        async (r) => {
          await r.stop();
          return new Error(`a private redis-server started for ${source}`);
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RedisUnavailableError);
    }
  });

  it("is refused under MONEYQ_REQUIRE_SAFE_REDIS with an error that says why", async () => {
    const error = (await serviceRedis("redis://127.0.0.1:1", "redis-server", "require-safe").catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toContain("MONEYQ_REQUIRE_SAFE_REDIS is set");
    expect(error.message).toContain("Set REDIS_URL");
  });
});

describe("a Redis outage while running", () => {
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill("SIGKILL");
        await exitOf(c);
      }
    }
  });

  it("is logged, never an unhandled error event", async () => {
    const server = await startPrivateRedis(installed("redis-server", "redis-server"));
    const { child } = await spawnWorker({
      REDIS_URL: server.url,
      PAYMENTS_API_URL: sb.sandbox.baseUrl,
      PAYMENTS_API_KEY: sb.sandbox.apiKey,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_SHUTDOWN_GRACE_MS: "500",
      // The webhook worker's connections fail in the outage too (nothing listens on port 9).
      MONEYQ_WEBHOOK_URL: "http://127.0.0.1:9/hook",
      MONEYQ_WEBHOOK_SECRET: "outage_test_secret_0123456789",
      MONEYQ_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8",
    }).catch(async (error) => {
      await server.stop();
      throw error;
    });
    children.push(child);
    let stderr = "";
    let stdout = "";
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    await server.stop();
    // Several reconnect attempts of every connection.
    await new Promise((r) => setTimeout(r, 3_000));
    child.kill("SIGTERM");
    await exitOf(child);
    expect(stderr).not.toContain("Unhandled error event");
    const failed = stdout.split("\n").filter((l) => l.includes("Redis connection failed"));
    expect(failed.length).toBeGreaterThan(0);
    // One line per connection and outage, not one per reconnect attempt.
    const names = failed.map((l) => JSON.parse(l).redis as string);
    expect(names).toEqual([...new Set(names)]);
    expect(stdout).not.toContain('"msg":"worker error"');
    expect(stdout).not.toContain('"msg":"webhook worker error"');
    expect(names).toContain("webhook worker");
  }, 60_000);
});

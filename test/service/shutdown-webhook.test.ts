import type { ChildProcess } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Producer } from "../../src/queues/producer.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandbox } from "../helpers/sandbox.js";
import { until } from "../helpers/service.js";

const sb = useSandbox({ settleDelayMs: 20 });
const redis = useTestRedis("shutwebhook");
const children: ChildProcess[] = [];
/** A webhook receiver that takes every delivery and never answers. */
const held: ServerResponse[] = [];
const receiver = createServer((req, res) => {
  req.resume();
  held.push(res);
});
let connection: RedisConnection;

beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  connection = redis.connect();
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGKILL");
      await exitOf(c);
    }
  }
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
});

describe("SIGTERM while a webhook receiver does not answer", () => {
  it("completes the shutdown (exit 0) instead of being cut off at the bound", async () => {
    const { child } = await spawnWorker({
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sb.sandbox.baseUrl,
      PAYMENTS_API_KEY: sb.sandbox.apiKey,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_SHUTDOWN_GRACE_MS: "500",
      MONEYQ_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      MONEYQ_WEBHOOK_SECRET: "shutdown_test_secret_0123456789",
      MONEYQ_WEBHOOK_ALLOW_PRIVATE: "127.0.0.0/8",
    });
    children.push(child);
    let stdout = "";
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    const producer = new Producer({
      connection,
      prefix: redis.prefix,
      accounts: ["default"],
      maxAttempts: 3,
      retentionMs: 60_000,
    });
    try {
      await producer.enqueue({
        kind: "wallet.create",
        account: "default",
        idempotencyKey: "webhook-shutdown-1",
        request: { body: { currency: "ZAR" } },
      });
      await until(
        async () => held.length,
        (n) => n >= 1,
        20_000,
      );
    } finally {
      await producer.close();
    }
    child.kill("SIGTERM");
    // 0: every close step ran; 1 would be the forced exit that skips queues and Redis.
    expect(await exitOf(child)).toBe(0);
    expect(stdout).not.toContain("shutdown did not finish in time");
  }, 60_000);
});

import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { Producer } from "../../src/queues/producer.js";
import { turnKeys } from "../../src/redis/keys.js";
import { bankPayout, payoutBatch } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { waitUntil } from "../helpers/wait-until.js";

// One account with 5,000 queued rows whose provider answers most of them 429, beside an idle
// account: each time the idle one is given a row, its request reaches the provider within
// three of its own slot intervals (its rate is 5/s: 600 ms), as measured on the provider's clock.
const STORM_KEY = "sk_sandbox_storm_isolation_01";
const CALM_KEY = "sk_sandbox_calm_isolation_001";
const CALM_RATE = 5;
const ROUNDS = 3;
const redis = useTestRedis("storm");
const sandbox = useSandboxProcess(["--settle-delay-ms", "20"]);
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) {
    c.kill("SIGTERM");
    await exitOf(c);
  }
});

describe("an account under a 429 storm with 5,000 rows queued", () => {
  it("delays no other account's first row by more than three of its slot intervals", async () => {
    await sandbox.addAccount("acct_storm", STORM_KEY, {
      rateLimitPerSecond: 2,
      rateLimitRetryAfterSeconds: 1,
    });
    await sandbox.addAccount("acct_calm", CALM_KEY);
    const env = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sandbox.baseUrl,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "storm", apiKey: STORM_KEY, ratePerSecond: 20 },
        { alias: "calm", apiKey: CALM_KEY, ratePerSecond: CALM_RATE },
      ]),
    };
    const worker = await spawnWorker(env);
    children.push(worker.child);
    const connection = redis.connect();
    const producer = new Producer({
      connection,
      prefix: redis.prefix,
      accounts: ["storm", "calm"],
      maxAttempts: 8,
      retentionMs: 3_600_000,
    });
    await producer.enqueueMany(payoutBatch("storm", 5_000, "storm"));
    await waitUntil(
      async () => (await sandbox.requests("acct_storm")).filter((r) => r.rateLimited).length >= 3,
      30_000,
      "the storm's first 429s",
    );

    const delays: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // The calm account idle, with no turn held: its worker has to start for the row.
      await waitUntil(
        async () => (await connection.zscore(turnKeys(redis.prefix).held, "calm")) === null,
        30_000,
        "the calm account idle",
      );
      const seen = (await sandbox.requests("acct_calm")).length;
      const enqueuedAt = Date.now();
      await producer.enqueue(bankPayout("calm", `r${round}`, "calm"));
      await waitUntil(
        async () => (await sandbox.requests("acct_calm")).length > seen,
        30_000,
        "the calm account's request",
      );
      const first = (await sandbox.requests("acct_calm"))[seen];
      delays.push((first?.at ?? Number.POSITIVE_INFINITY) - enqueuedAt);
    }
    await producer.close();

    const stormRefused = (await sandbox.requests("acct_storm")).filter((r) => r.rateLimited);
    expect(stormRefused.length, "the storm went on").toBeGreaterThanOrEqual(3);
    const slotMs = 1000 / CALM_RATE;
    for (const delay of delays)
      expect(delay, `delays ${delays.join(", ")} ms`).toBeLessThanOrEqual(3 * slotMs);
  }, 180_000);
});

import { Queue } from "bullmq";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { RateGate } from "../../src/processors/rate-gate.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import { accountPauseKey } from "../../src/redis/keys.js";
import { EVERY_READ_ANSWER, READS_PER_ACCOUNT } from "../fixtures/provider-profiles.js";
import { runCli } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { startScriptedServer } from "../helpers/scripted-server.js";
import { waitFor } from "../helpers/wait-until.js";

// A provider we did not write, and the service's Redis, whose gate a running service shares.
const provider = await startScriptedServer();
afterAll(() => provider.close());
const redis = useTestRedis("check-gate");
const connection = redis.connect();
const MARGIN_MS = 40;
const gate = new RateGate(connection, redis.prefix, MARGIN_MS);

/** The check's reads an account; it sends no submission, so it never gives a go-ahead (3). */
const READS = READS_PER_ACCOUNT;
const NO_SUBMISSION_SEEN = 3;

const check = (env: Record<string, string> = {}) =>
  runCli(["provider", "check"], {
    PAYMENTS_API_URL: provider.baseUrl,
    PAYMENTS_API_KEY: "sk_check_key_0001",
    REDIS_URL: redis.url,
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_RATE_WINDOW_MARGIN_MS: String(MARGIN_MS),
    ...env,
  });

beforeEach(async () => {
  await redis.clean();
  provider.requests.length = 0;
  provider.reply({ status: 200, body: EVERY_READ_ANSWER });
});

describe("moneyq provider check goes through the account's rate gate", { timeout: 60_000 }, () => {
  it("spaces its reads at the account's rate", async () => {
    const result = await check({ MONEYQ_RATE_LIMIT_PER_SECOND: "2" });
    expect(result.code).toBe(NO_SUBMISSION_SEEN);
    expect(result.stdout).not.toContain("cannot read");
    expect(result.stdout).toContain(
      `reads through the rate gate of ${redis.url}, prefix ${redis.prefix}`,
    );
    const at = provider.requests.map((r) => r.at);
    expect(at).toHaveLength(READS);
    // At 2 a second, no three reads in one sliding second (before the gate: all at once).
    for (let i = 2; i < at.length; i += 1)
      expect((at[i] as number) - (at[i - 2] as number)).toBeGreaterThan(1000);
  });

  it("sends nothing while a 429's pause holds the account, then reads", async () => {
    // Longer than the CLI takes to start, shorter than the 10 s the check waits out.
    const PAUSE_MS = 5_000;
    const pausedAt = Date.now();
    await gate.pause("default", PAUSE_MS);
    const result = await check();
    expect(result.code).toBe(NO_SUBMISSION_SEEN);
    expect(result.stdout).not.toContain("cannot read");
    expect(provider.requests).toHaveLength(READS);
    for (const request of provider.requests)
      expect(request.at).toBeGreaterThanOrEqual(pausedAt + PAUSE_MS);
  });

  it("refuses its reads, unsent, while a long pause or an operator's pause holds the account", async () => {
    await gate.pause("default", 60_000);
    const rateLimited = await check();
    expect(rateLimited.code).toBe(3);
    expect(rateLimited.stdout).toMatch(
      /not sent: the account default is paused for \d+ s more \(the provider's Retry-After\)/,
    );
    await redis.clean();
    await connection.set(accountPauseKey(redis.space(), "default"), "{}");
    const held = await check();
    expect(held.code).toBe(3);
    expect(held.stdout).toContain(
      "not sent: the account default is paused in moneyq (by an operator, or after the provider refused its key)",
    );
    expect(provider.requests).toHaveLength(0);
  });

  it("stores a 429's Retry-After, for the service's workers and its own further reads", async () => {
    provider.reply({
      status: 429,
      headers: { "retry-after": "30" },
      body: { success: false, message: "slow down" },
    });
    const result = await check();
    expect(result.code).toBe(3);
    expect(provider.requests).toHaveLength(1);
    const slot = await gate.reserve("default", 100, 1, undefined, { lane: "urgent" });
    expect(slot).toMatchObject({ reserved: false });
    expect((slot as { pausedMs: number }).pausedMs).toBeGreaterThan(25_000);
  });

  it("says when no service has opened the account's queue under its prefix", async () => {
    const NOTICE = "no moneyq service has opened account default's queue under this prefix";
    expect((await check()).stdout).toContain(NOTICE);
    const queueName = accountQueueName(redis.space(), "default");
    const queue = new Queue(queueName, { connection: redis.connect(), prefix: redis.prefix });
    const meta = `${bullKeys.queue(redis.prefix, queueName)}:meta`;
    await waitFor(
      () => connection.exists(meta),
      (n) => n === 1,
      5_000,
      "the queue's meta",
    );
    const served = await check();
    expect(served.code).toBe(NO_SUBMISSION_SEEN);
    expect(served.stdout).not.toContain(NOTICE);
    await queue.close();
  });

  it("refuses to start when its Redis does not answer", async () => {
    const result = await check({ REDIS_URL: "redis://127.0.0.1:1" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Redis does not answer at redis://127.0.0.1:1");
    expect(provider.requests).toHaveLength(0);
  });
});

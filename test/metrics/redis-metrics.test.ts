import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTENTION_ACCOUNTS, MetricAccounts } from "../../src/metrics/metric-accounts.js";
import { registerRedisMetrics } from "../../src/metrics/redis-metrics.js";
import { AccountPauses } from "../../src/queues/account-pauses.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import {
  backlogKey,
  keyspace,
  resultsStreamKey,
  webhookEndpointKey,
} from "../../src/redis/keys.js";
import { startPrivateRedis } from "../../src/redis/private-redis.js";
import { installed } from "../helpers/installed.js";
import { singleRedis, useTestRedis } from "../helpers/redis.js";

const redis = useTestRedis("rmetrics");
let connection: RedisConnection;
let queues: Map<string, Queue>;
let clock = 1_000_000_000_000;

function registryWith(conn: RedisConnection, cacheMs: number): Registry {
  const registry = new Registry();
  registerRedisMetrics(registry, {
    connection: conn,
    prefix: redis.prefix,
    queues,
    pauses: new AccountPauses(conn, redis.prefix, queues),
    resultsStreams: [resultsStreamKey(keyspace(redis.prefix), "any")],
    cacheMs,
    now: () => clock,
  });
  return registry;
}

async function values(registry: Registry, name: string) {
  return (await registry.getSingleMetric(name)?.get())?.values ?? [];
}

beforeAll(() => {
  connection = redis.connect();
  queues = new Map(
    ["alpha", "beta"].map((a) => [
      a,
      new Queue(accountQueueName(singleRedis, a), { connection, prefix: redis.prefix }),
    ]),
  );
});
afterAll(async () => {
  await Promise.all([...queues.values()].map((q) => q.close()));
});

describe("Redis readings at scrape time", () => {
  it("report depth by state, the oldest waiting job's age, pauses and the stream", async () => {
    const alpha = queues.get("alpha") as Queue;
    await alpha.add("payout", {}, { jobId: "older", timestamp: clock - 90_000 });
    await alpha.add("payout", {}, { jobId: "newer", timestamp: clock - 5_000 });
    await alpha.add("payout", {}, { jobId: "later", delay: 60_000 });
    await new AccountPauses(connection, redis.prefix, queues).pause("beta", "test");
    await connection.xadd(resultsStreamKey(keyspace(redis.prefix), "any"), "*", "result", "{}");
    const registry = registryWith(connection, 0);
    expect(await values(registry, "moneyq_queue_jobs")).toEqual(
      expect.arrayContaining([
        { labels: { queue: "payments-alpha", account: "alpha", state: "waiting" }, value: 2 },
        { labels: { queue: "payments-alpha", account: "alpha", state: "delayed" }, value: 1 },
        { labels: { queue: "payments-beta", account: "beta", state: "waiting" }, value: 0 },
      ]),
    );
    expect(await values(registry, "moneyq_queue_oldest_waiting_age_seconds")).toEqual([
      { labels: { queue: "payments-alpha", account: "alpha" }, value: 90 },
      { labels: { queue: "payments-beta", account: "beta" }, value: 0 },
    ]);
    expect(await values(registry, "moneyq_account_paused")).toEqual([
      { labels: { account: "alpha" }, value: 0 },
      { labels: { account: "beta" }, value: 1 },
    ]);
    expect(await values(registry, "moneyq_results_stream_length")).toEqual([
      { labels: {}, value: 1 },
    ]);
    expect(await values(registry, "moneyq_redis_up")).toEqual([{ labels: {}, value: 1 }]);
    expect(await values(registry, "moneyq_webhook_endpoint_stopped")).toEqual([
      { labels: {}, value: 0 },
    ]);
    await connection.hset(webhookEndpointKey(redis.prefix), "goneAt", "1");
    expect(await values(registryWith(connection, 0), "moneyq_webhook_endpoint_stopped")).toEqual([
      { labels: {}, value: 1 },
    ]);
  });

  it("sums unnamed accounts under _other, showing on their own those that need attention", async () => {
    // 2 more unnamed accounts waiting than are shown, one paused, one with a backlog.
    const unnamed = Array.from({ length: ATTENTION_ACCOUNTS + 3 }, (_, i) => `u${i + 1}`);
    const many = new Map(
      ["n1", ...unnamed].map((a) => [
        a,
        new Queue(accountQueueName(singleRedis, a), { connection, prefix: redis.prefix }),
      ]),
    );
    const waiting = unnamed.slice(0, ATTENTION_ACCOUNTS + 2);
    // u<i> has waited i seconds: u1 and u2 wait least, so they are folded into "_other".
    await Promise.all(
      waiting.map((a, i) =>
        (many.get(a) as Queue).add("payout", {}, { jobId: "w", timestamp: clock - (i + 1) * 1000 }),
      ),
    );
    await (many.get("n1") as Queue).add("payout", {}, { jobId: "w", timestamp: clock - 500 });
    const last = unnamed.at(-1) as string;
    const pauses = new AccountPauses(connection, redis.prefix, many);
    await pauses.pause(last, "test");
    await connection.zadd(backlogKey(keyspace(redis.prefix), "u5"), 1, "a", 2, "b", 3, "c");
    const registry = new Registry();
    registerRedisMetrics(registry, {
      connection,
      prefix: redis.prefix,
      queues: many,
      accounts: new MetricAccounts([...many.keys()], ["n1"]),
      pauses,
      resultsStreams: [resultsStreamKey(keyspace(redis.prefix), "any")],
      cacheMs: 0,
      now: () => clock,
    });

    const jobs = await values(registry, "moneyq_queue_jobs");
    expect(new Set(jobs.map((v) => v.labels.account))).toEqual(new Set(["n1", "_other"]));
    expect(jobs.find((v) => v.labels.account === "_other" && v.labels.state === "waiting")).toEqual(
      { labels: { queue: "_other", account: "_other", state: "waiting" }, value: waiting.length },
    );
    const ages = await values(registry, "moneyq_queue_oldest_waiting_age_seconds");
    const shown = waiting.slice(2).map((a, i) => ({
      labels: { queue: `payments-${a}`, account: a },
      value: i + 3,
    }));
    expect(ages).toEqual(
      expect.arrayContaining([
        { labels: { queue: "payments-n1", account: "n1" }, value: 0.5 },
        ...shown,
        { labels: { queue: "_other", account: "_other" }, value: 2 },
      ]),
    );
    expect(ages).toHaveLength(1 + ATTENTION_ACCOUNTS + 1);
    expect(await values(registry, "moneyq_account_paused")).toEqual([
      { labels: { account: "n1" }, value: 0 },
      { labels: { account: last }, value: 1 },
      { labels: { account: "_other" }, value: 0 },
    ]);
    expect(await values(registry, "moneyq_needs_reconciliation_jobs")).toEqual([
      { labels: { account: "n1" }, value: 0 },
      { labels: { account: "u5" }, value: 3 },
      { labels: { account: "_other" }, value: 0 },
    ]);
    await pauses.resume(last);
    await Promise.all([...many.values()].map((q) => q.obliterate({ force: true })));
    await Promise.all([...many.values()].map((q) => q.close()));
  });

  it("one reading serves scrapes within the cache time, then Redis is read again", async () => {
    const registry = registryWith(connection, 2_000);
    const waiting = async () =>
      (await values(registry, "moneyq_queue_jobs")).find(
        (v) => v.labels.account === "alpha" && v.labels.state === "waiting",
      )?.value;
    const first = await waiting();
    await (queues.get("alpha") as Queue).add("payout", {}, { jobId: "another" });
    clock += 1_999;
    expect(await waiting()).toBe(first);
    clock += 1;
    expect(await waiting()).toBe((first as number) + 1);
  });

  it("when Redis stops answering, redis_up is 0 and no stale reading is reported", async () => {
    const server = await startPrivateRedis(installed("redis-server", "redis-server"));
    const conn = new Redis(server.url, { maxRetriesPerRequest: 1 });
    conn.on("error", () => undefined);
    const own = new Map([
      [
        "alpha",
        new Queue(accountQueueName(singleRedis, "alpha"), {
          connection: conn,
          prefix: redis.prefix,
        }),
      ],
    ]);
    for (const q of own.values()) q.on("error", () => undefined);
    const registry = new Registry();
    registerRedisMetrics(registry, {
      connection: conn,
      prefix: redis.prefix,
      queues: own,
      pauses: new AccountPauses(conn, redis.prefix, own),
      resultsStreams: [resultsStreamKey(keyspace(redis.prefix), "any")],
      cacheMs: 0,
      timeoutMs: 300,
    });
    expect(await values(registry, "moneyq_redis_up")).toEqual([{ labels: {}, value: 1 }]);
    expect(await values(registry, "moneyq_queue_jobs")).not.toEqual([]);
    await server.stop();
    expect(await values(registry, "moneyq_redis_up")).toEqual([{ labels: {}, value: 0 }]);
    expect(await values(registry, "moneyq_queue_jobs")).toEqual([]);
    conn.disconnect();
    await Promise.allSettled([...own.values()].map((q) => q.close()));
  });
});

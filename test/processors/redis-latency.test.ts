import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Producer } from "../../src/queues/producer.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { JobResult } from "../../src/results/job-result.js";
import { payoutBatch } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { type DelayProxy, startDelayProxy } from "../helpers/delay-proxy.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { shareTurn } from "../helpers/shared-turn.js";
import { maxInAnySecond } from "../helpers/sliding-window.js";
import { waitUntil } from "../helpers/wait-until.js";

// Two worker processes share one account at R = 30, each reaching Redis through a TCP proxy
// that holds back every reply 25 ms: a round trip of more than the margin (40 ms) allows a
// request to leave after its slot. The slots are still kept on Redis's clock, so every row is
// sent, and the provider never sees more than R in a sliding second.
const RATE = 30;
const ROWS = 300;
const REPLY_DELAY_MS = 25;
const KEY = "sk_sandbox_redis_latency_01";
const redis = useTestRedis("latency");
const sandbox = useSandboxProcess(["--settle-delay-ms", "20"]);
const children: ChildProcess[] = [];
let proxy: DelayProxy | undefined;
beforeAll(async () => {
  proxy = await startDelayProxy(redis.url, REPLY_DELAY_MS);
});
afterAll(async () => {
  for (const c of children) {
    c.kill("SIGTERM");
    await exitOf(c);
  }
  await proxy?.close();
});

describe(`a Redis ${REPLY_DELAY_MS} ms away`, () => {
  it("two worker processes send every row of a batch, never more than R in any sliding second", async () => {
    await sandbox.addAccount("acct_far_redis", KEY);
    const env = {
      REDIS_URL: (proxy as DelayProxy).url,
      PAYMENTS_API_URL: sandbox.baseUrl,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "far", apiKey: KEY, ratePerSecond: RATE, concurrency: 16 },
      ]),
    };
    const workers = [await spawnWorker(env), await spawnWorker(env)];
    children.push(...workers.map((w) => w.child));
    const connection = redis.connect();
    const producer = new Producer({
      connection,
      prefix: redis.prefix,
      accounts: ["far"],
      maxAttempts: 8,
      retentionMs: 3_600_000,
    });
    const rows = payoutBatch("far-redis", ROWS, "far");
    await producer.enqueueMany(rows);
    const urls = workers.map((w) => w.metricsUrl);
    expect(await shareTurn(connection, redis.prefix, "far", urls), "both serve").toBe(true);
    const stream = resultsStreamKey(keyspace(redis.prefix, connection.isCluster), "far");
    await waitUntil(
      async () => (await connection.xlen(stream)) >= ROWS,
      150_000,
      async () => `every row's result (${await connection.xlen(stream)} of ${ROWS})`,
      250,
    );
    await producer.close();

    const results = (await connection.xrange(stream, "-", "+"))
      .filter(([, fields]) => fields[0] === "result")
      .map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)));
    expect(results).toHaveLength(ROWS);
    expect(new Set(results.map((r) => r.jobId)).size).toBe(ROWS);
    expect(new Set(results.map((r) => r.result))).toEqual(new Set(["succeeded"]));
    const log = await sandbox.requests("acct_far_redis");
    // One submission a row (its key), then its confirmation lookups: every request counts.
    const submissions = log.filter((r) => r.method === "POST");
    expect(new Set(submissions.map((r) => r.idempotencyKey)).size).toBe(ROWS);
    expect(submissions).toHaveLength(ROWS);
    expect(log.length).toBeGreaterThanOrEqual(2 * ROWS);
    expect(maxInAnySecond(log.map((r) => r.at))).toBeLessThanOrEqual(RATE);
  }, 180_000);
});

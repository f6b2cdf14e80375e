import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { Producer } from "../../src/queues/producer.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { JobResult } from "../../src/results/job-result.js";
import { payoutBatch } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { waitUntil } from "../helpers/wait-until.js";

// Every payout answers PENDING and settles 0.5 s later. At 160 requests a second the 1,200 rows
// take 7.5 s to submit (15 s with their lookups), far past the 3.75 s deadline: a lookup that
// waited behind them would give its payout up. The first lookup is set to 0.5 s, so that each
// row costs two requests (the default's 200 ms doubling would make it three).
const KEY = "sk_sandbox_deadline_000001";
const ROWS = 1200;
const redis = useTestRedis("deadline");
const sandbox = useSandboxProcess(["--settle-delay-ms", "500"]);
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) {
    c.kill("SIGTERM");
    await exitOf(c);
  }
});

describe("the confirmation deadline counts lookups, not waiting", () => {
  it("1,200 rows at 160/s with a 3.75 s deadline: no row needs reconciliation", async () => {
    await sandbox.addAccount("acct_deadline", KEY);
    const env = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: sandbox.baseUrl,
      MONEYQ_REDIS_PREFIX: redis.prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_CONFIRM_DEADLINE_MS: "3750",
      MONEYQ_CONFIRM_FIRST_DELAY_MS: "500",
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "deadline", apiKey: KEY, ratePerSecond: 160, concurrency: 16 },
      ]),
    };
    const connection = redis.connect();
    const producer = new Producer({
      connection,
      prefix: redis.prefix,
      accounts: ["deadline"],
      maxAttempts: 8,
      retentionMs: 3_600_000,
    });
    await producer.enqueueMany(payoutBatch("deadline", ROWS, "deadline"));
    const worker = await spawnWorker(env);
    children.push(worker.child);
    await waitUntil(
      async () => (await connection.xlen(resultsStreamKey(keyspace(redis.prefix), "any"))) >= ROWS,
      300_000,
      "every row's result",
    );
    await producer.close();
    const results = (
      await connection.xrange(resultsStreamKey(keyspace(redis.prefix), "any"), "-", "+")
    ).map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)));
    expect(results).toHaveLength(ROWS);
    const given = results.filter((r) => r.result !== "succeeded");
    expect(given.map((r) => `${r.reference}: ${r.result} ${r.code}`)).toEqual([]);
    // The rows really were PENDING first: each was looked up.
    const lookups = (await sandbox.requests("acct_deadline")).filter((r) => r.method === "GET");
    expect(lookups.length).toBeGreaterThanOrEqual(ROWS);
  }, 400_000);
});

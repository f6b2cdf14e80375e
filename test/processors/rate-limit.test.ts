import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { Producer } from "../../src/queues/producer.js";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { payoutBatch } from "../fixtures/batches.js";
import { exitOf, spawnCli, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { call } from "../helpers/sandbox.js";
import { shareTurn } from "../helpers/shared-turn.js";
import { waitUntil } from "../helpers/wait-until.js";

const RATE = 40;
const JOBS = 240;
const KEY = "sk_sandbox_rate_limited_0001";
const redis = useTestRedis("rate");
const children: ChildProcess[] = [];
let sandbox: { baseUrl: string; controlUrl: string };
let env: Record<string, string>;

beforeAll(async () => {
  // The sandbox runs in its own process, as a provider would: what it measures is then not
  // disturbed by this test process.
  const child = spawnCli(["sandbox", "--port", "0", "--json", "--settle-delay-ms", "20"]);
  children.push(child);
  sandbox = JSON.parse(
    await new Promise<string>((resolve) => {
      let out = "";
      child.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) resolve(out);
      });
    }),
  );
  await call(`${sandbox.controlUrl}/accounts`, "POST", {
    body: { accountId: "acct_limited", apiKey: KEY },
  });
  env = {
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sandbox.baseUrl,
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_LOG_LEVEL: "warn",
    MONEYQ_ACCOUNTS: JSON.stringify([
      { alias: "limited", apiKey: KEY, ratePerSecond: RATE, concurrency: 16 },
    ]),
  };
});
afterAll(async () => {
  for (const c of children) {
    c.kill("SIGTERM");
    await exitOf(c);
  }
});

describe("the per-account rate limit", () => {
  it("two worker processes on one account never exceed it in any sliding second, and reach 90% of it", async () => {
    const config = loadConfig(env);
    const workers = [await spawnWorker(env), await spawnWorker(env)];
    children.push(...workers.map((w) => w.child));
    const connection = redis.connect();
    const producer = new Producer({
      connection,
      prefix: config.redisPrefix,
      accounts: ["limited"],
      maxAttempts: config.pipeline.maxAttempts,
      retentionMs: config.pipeline.retentionMs,
    });
    await producer.enqueueMany(payoutBatch("rate", JOBS, "limited"));
    const urls = workers.map((w) => w.metricsUrl);
    expect(await shareTurn(connection, config.redisPrefix, "limited", urls), "both serve").toBe(
      true,
    );
    await waitUntil(
      async () =>
        (await connection.xlen(
          resultsStreamKey(keyspace(config.redisPrefix, connection.isCluster), "limited"),
        )) >= JOBS,
      200_000,
      "the batch's results",
      100,
    );
    await producer.close();

    const log = (
      await call(`${sandbox.controlUrl}/requests`, "GET", { query: { accountId: "acct_limited" } })
    ).body.data.requests as { at: number }[];
    const times = log.map((r) => r.at).sort((a, b) => a - b);
    let maxInWindow = 0;
    for (let i = 0, j = 0; i < times.length; i += 1) {
      while ((times[i] as number) - (times[j] as number) >= 1000) j += 1;
      maxInWindow = Math.max(maxInWindow, i - j + 1);
    }
    // Submissions and lookups both count, as at a provider.
    expect(times.length).toBeGreaterThanOrEqual(2 * JOBS);
    expect(maxInWindow).toBeLessThanOrEqual(RATE);
    // A slot a worker woke up too late to use is capacity the host lost, not the gate: on a
    // quiet machine there is none and the requirement is 90% of R; on an overloaded one (CI
    // machines have been) it holds for the share of slots the workers could use.
    let missed = 0;
    for (const w of workers) {
      const exposition = await (await fetch(w.metricsUrl)).text();
      missed += Number(/^moneyq_rate_slots_missed_total\{[^}]*\} (\S+)$/m.exec(exposition)?.[1]);
    }
    expect(Number.isInteger(missed), "each worker exposes its missed-slot count").toBe(true);
    const usable = times.length / (times.length + missed);
    const busySeconds = ((times.at(-1) as number) - (times[0] as number)) / 1000;
    const rate = (times.length - 1) / busySeconds;
    expect(rate, `${missed} slots missed of ${times.length + missed}`).toBeGreaterThanOrEqual(
      0.9 * RATE * usable,
    );
  }, 240_000);
});

import type { ChildProcess } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Queue } from "bullmq";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PaymentsInvalidRequestError } from "../../src/client/errors.js";
import { PaymentsClient } from "../../src/client/payments-client.js";
import { toTransportError } from "../../src/client/transport-error.js";
import { type Config, loadConfig } from "../../src/config/load-config.js";
import { createLogger } from "../../src/logger.js";
import { classify } from "../../src/processors/classify.js";
import { jobIdFor } from "../../src/queues/idempotency-key.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { Producer } from "../../src/queues/producer.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { JobResult } from "../../src/results/job-result.js";
import { SHUTDOWN_BOUND_MS } from "../../src/service/start-service.js";
import { type RunningWorkers, startWorkers } from "../../src/service/start-workers.js";
import { bankPayout } from "../fixtures/batches.js";
import { exitOf, spawnWorker } from "../helpers/cli.js";
import { useTestRedis } from "../helpers/redis.js";
import { useSandbox } from "../helpers/sandbox.js";
import { startScriptedServer } from "../helpers/scripted-server.js";
import { until } from "../helpers/service.js";
import { waitFor, waitUntil } from "../helpers/wait-until.js";

const ALPHA_KEY = "sk_sandbox_iso_alpha_00001";
const BETA_KEY = "sk_sandbox_iso_beta_000001";

/** Keys no HTTP header can carry (or that are not visible ASCII), as a hostile producer writes them. */
const UNSENDABLE = ["ключ-1", "a\r\nb", "a\u0000b", "emoji-😀", "tab\tkey", "space key"];

const sb = useSandbox({
  settleDelayMs: 20,
  accounts: [
    { accountId: "acct_iso_alpha", apiKey: ALPHA_KEY },
    { accountId: "acct_iso_beta", apiKey: BETA_KEY },
  ],
});
const redis = useTestRedis("iso");
// Every account of these tests, for reading their results streams (one per account on a cluster).
const ACCOUNTS = ["alpha", "beta", "default"];
let config: Config;
let connection: RedisConnection;
let producer: Producer;
let alphaQueue: Queue;
const running: RunningWorkers[] = [];

beforeAll(async () => {
  config = loadConfig({
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sb.sandbox.baseUrl,
    MONEYQ_ACCOUNTS: JSON.stringify([
      // Small concurrencies: today's one shared pool has max(8, 4 + 4) connections.
      { alias: "alpha", apiKey: ALPHA_KEY, concurrency: 4 },
      { alias: "beta", apiKey: BETA_KEY, concurrency: 4 },
    ]),
    MONEYQ_REDIS_PREFIX: redis.prefix,
    MONEYQ_LOG_LEVEL: "silent",
    MONEYQ_RATE_LIMIT_PER_SECOND: "1000",
  });
  connection = redis.connect();
  producer = new Producer({
    connection,
    prefix: config.redisPrefix,
    accounts: ["alpha", "beta"],
    maxAttempts: config.pipeline.maxAttempts,
    retentionMs: config.pipeline.retentionMs,
  });
  alphaQueue = new Queue(accountQueueName(redis.space(), "alpha"), {
    connection,
    prefix: config.redisPrefix,
  });
});
afterAll(async () => {
  await Promise.allSettled(running.map((w) => w.close()));
  await Promise.allSettled([producer?.close(), alphaQueue?.close()]);
});

async function start(): Promise<RunningWorkers> {
  const workers = await startWorkers({
    config,
    connection,
    logger: createLogger("silent"),
    registry: new Registry(),
  });
  running.push(workers);
  return workers;
}

function payout(account: string, reference: string): JobInput {
  return bankPayout("iso", reference, account);
}

/** Jobs put straight into alpha's queue, as the producer would, but past every entry check. */
async function addUnsendable(label: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const key = `${UNSENDABLE[i % UNSENDABLE.length]}-${label}-${i}`;
    const jobId = jobIdFor("alpha", key);
    const { idempotencyKey: _, ...input } = payout("alpha", `${label}-${i}`);
    await alphaQueue.add(
      "payout.bank",
      { envelope: { ...input, idempotencyKey: key } },
      { jobId, attempts: config.pipeline.maxAttempts, backoff: { type: "moneyq" } },
    );
    ids.push(jobId);
  }
  return ids;
}

async function resultsFor(ids: readonly string[], timeoutMs = 30_000): Promise<JobResult[]> {
  const wanted = new Set(ids);
  const read = async () =>
    (await redis.resultEntries(ACCOUNTS, config.redisPrefix))
      .map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)))
      .filter((r) => wanted.has(r.jobId));
  return waitFor(
    read,
    (found) => found.length >= wanted.size,
    timeoutMs,
    (found) => `${wanted.size} results, have ${found.length}`,
    50,
  );
}

async function alphaRequests(): Promise<number> {
  const answer = await sb.control("GET", "/requests", { query: { accountId: "acct_iso_alpha" } });
  return (answer.body.data.requests as unknown[]).length;
}

function expectRejectedNamingTheKey(results: readonly JobResult[]) {
  for (const r of results) {
    expect(r).toMatchObject({ account: "alpha", result: "rejected" });
    // Refused by the client before dispatch, or by the envelope's own rule when it has one.
    expect(["invalid_request", "validation_error"]).toContain(r.code);
    expect(r.message).toMatch(/^idempotencyKey: /);
    // Rejected on its first attempt: never retried.
    expect(r.attempts).toBe(1);
  }
}

describe("accounts are isolated in the pipeline", () => {
  it("a second account keeps finishing while the first one's queue holds unsendable keys", async () => {
    await start();
    const bad = await addUnsendable("first", 40);
    const good = await producer.enqueueMany(
      Array.from({ length: 60 }, (_, i) => payout("beta", `first-${i}`)),
    );
    const beta = await resultsFor(good.map((j) => j.jobId));
    expect(beta.map((r) => r.result)).toEqual(Array(60).fill("succeeded"));
    const alpha = await resultsFor(bad);
    expect(alpha).toHaveLength(40);
    expectRejectedNamingTheKey(alpha);
    // Not one of them left this machine.
    expect(await alphaRequests()).toBe(0);
  }, 60_000);

  it("restarted on the same Redis with unsendable jobs left over, every account still finishes", async () => {
    await Promise.all(running.splice(0).map((w) => w.close()));
    const bad = await addUnsendable("restart", 40);
    const good = await producer.enqueueMany(
      Array.from({ length: 60 }, (_, i) => payout("beta", `restart-${i}`)),
    );
    await start();
    const beta = await resultsFor(good.map((j) => j.jobId));
    expect(beta.map((r) => r.result)).toEqual(Array(60).fill("succeeded"));
    expectRejectedNamingTheKey(await resultsFor(bad));
    expect(await alphaRequests()).toBe(0);
  }, 60_000);
});

describe("an account whose upstream hangs", () => {
  it("holds only its own connections: the other account's jobs keep finishing", async () => {
    // Every request with alpha's key is taken and never answered; beta's succeed at once.
    const held: ServerResponse[] = [];
    // The keys each connection carried: a pool shared by the accounts would send alpha's
    // requests on beta's idle kept-alive connections.
    const keysBySocket = new Map<Socket, Set<string>>();
    const upstream = createServer((req, res) => {
      const keys = keysBySocket.get(req.socket) ?? new Set<string>();
      keys.add(String(req.headers["x-api-key"]));
      keysBySocket.set(req.socket, keys);
      req.resume();
      req.on("end", () => {
        if (req.headers["x-api-key"] === ALPHA_KEY) {
          held.push(res);
          return;
        }
        const now = new Date().toISOString();
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            success: true,
            message: "ok",
            data: {
              transactionId: `tx-${Math.random().toString(36).slice(2)}`,
              type: "DEBIT",
              status: "SUCCESSFUL",
              channel: "bank",
              amount: 10,
              fee: 0,
              currency: "NGN",
              createdAt: now,
              updatedAt: now,
            },
          }),
        );
      });
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const prefix = `${redis.prefix}-hang`;
    const hangConfig = loadConfig({
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`,
      MONEYQ_ACCOUNTS: JSON.stringify([
        { alias: "alpha", apiKey: ALPHA_KEY, concurrency: 4 },
        { alias: "beta", apiKey: BETA_KEY, concurrency: 4 },
      ]),
      MONEYQ_REDIS_PREFIX: prefix,
      MONEYQ_LOG_LEVEL: "silent",
      MONEYQ_RATE_LIMIT_PER_SECOND: "1000",
      MONEYQ_REQUEST_TIMEOUT_MS: "600000",
      MONEYQ_SHUTDOWN_GRACE_MS: "200",
    });
    const jobs = new Producer({
      connection,
      prefix,
      accounts: ["alpha", "beta"],
      maxAttempts: 3,
      retentionMs: 60_000,
    });
    const workers = await startWorkers({
      config: hangConfig,
      connection,
      logger: createLogger("silent"),
      registry: new Registry(),
    });
    const betaResults = async (ids: ReadonlySet<string>) =>
      (await redis.resultEntries(ACCOUNTS, prefix))
        .map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)))
        .filter((r) => ids.has(r.jobId));
    try {
      // Beta first: its connections stay open and idle in its pool.
      const early = new Set(
        (
          await jobs.enqueueMany(Array.from({ length: 10 }, (_, i) => payout("beta", `e-${i}`)))
        ).map((j) => j.jobId),
      );
      await until(
        () => betaResults(early),
        (found) => found.length === early.size,
        20_000,
      );
      await jobs.enqueueMany(Array.from({ length: 12 }, (_, i) => payout("alpha", `h-${i}`)));
      await waitUntil(() => held.length >= 4, 20_000, "alpha's requests to reach the upstream");
      const beta = await jobs.enqueueMany(
        Array.from({ length: 40 }, (_, i) => payout("beta", `h-${i}`)),
      );
      const wanted = new Set(beta.map((j) => j.jobId));
      const finished = await until(
        () => betaResults(wanted),
        (found) => found.length === wanted.size,
        20_000,
      );
      expect(finished.map((r) => r.result)).toEqual(Array(40).fill("succeeded"));
      // Alpha still holds exactly its own four connections, and none of beta's.
      expect(held).toHaveLength(4);
      const sockets = [...keysBySocket.values()];
      expect(sockets.filter((keys) => keys.size > 1)).toEqual([]);
      const alphaSockets = sockets.filter((keys) => keys.has(ALPHA_KEY));
      expect(alphaSockets).toHaveLength(4);
      // Beta had connections of its own the whole time (at most its pool's four).
      const betaSockets = sockets.filter((keys) => keys.has(BETA_KEY));
      expect(betaSockets.length).toBeGreaterThan(0);
      expect(betaSockets.length).toBeLessThanOrEqual(4);
    } finally {
      await workers.close();
      await jobs.close();
      await new Promise<void>((r) => {
        upstream.closeAllConnections();
        upstream.close(() => r());
      });
    }
  }, 60_000);
});

describe("SIGTERM while requests hang", () => {
  const GRACE_MS = 1_000;
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill("SIGKILL");
        await exitOf(c);
      }
    }
  });

  /** A worker process whose upstream takes every request and never answers. */
  async function hangingWorker(prefix: string) {
    const upstream = await startScriptedServer();
    upstream.reply({ hang: true });
    const env = {
      REDIS_URL: redis.url,
      PAYMENTS_API_URL: upstream.baseUrl,
      PAYMENTS_API_KEY: ALPHA_KEY,
      MONEYQ_REDIS_PREFIX: prefix,
      MONEYQ_LOG_LEVEL: "warn",
      MONEYQ_CONCURRENCY: "8",
      MONEYQ_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      // Far longer than the test: only the shutdown can end these requests.
      MONEYQ_REQUEST_TIMEOUT_MS: "600000",
    };
    const jobs = new Producer({
      connection,
      prefix,
      accounts: ["default"],
      maxAttempts: 3,
      retentionMs: 60_000,
    });
    const enqueued = await jobs.enqueueMany(
      Array.from({ length: 8 }, (_, i) => payout("default", `hang-${prefix}-${i}`)),
    );
    await jobs.close();
    const { child } = await spawnWorker(env);
    children.push(child);
    await waitUntil(
      () => upstream.requests.length >= 8,
      20_000,
      () => `the worker's 8 requests, have ${upstream.requests.length}`,
    );
    return { child, upstream, env, jobIds: enqueued.map((j) => j.jobId) };
  }

  it("ends the process within the grace period plus the fixed bound, handing its jobs back", async () => {
    const prefix = `${redis.prefix}-term`;
    const { child, upstream, env, jobIds } = await hangingWorker(prefix);
    try {
      const asked = Date.now();
      child.kill("SIGTERM");
      // 0: every close step ran (1 would be the forced exit at the bound).
      expect(await exitOf(child)).toBe(0);
      expect(Date.now() - asked).toBeLessThan(GRACE_MS + SHUTDOWN_BOUND_MS);
      // The requests were ended, not answered: no job has a result, each is back in its queue.
      const queue = new Queue(accountQueueName(redis.space(prefix), "default"), {
        connection,
        prefix,
      });
      try {
        expect(await redis.resultEntries(ACCOUNTS, prefix)).toEqual([]);
        const counts = await queue.getJobCounts("active", "wait", "delayed", "prioritized");
        expect(counts.active).toBe(0);
        expect((counts.wait ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0)).toBe(
          jobIds.length,
        );
      } finally {
        await queue.close();
      }
      // The upstream answers now: a new run finishes each job exactly once.
      const now = new Date().toISOString();
      upstream.reply({
        status: 200,
        body: {
          success: true,
          message: "ok",
          data: {
            transactionId: "tx-after-restart",
            type: "DEBIT",
            status: "SUCCESSFUL",
            channel: "bank",
            amount: 10,
            fee: 0,
            currency: "NGN",
            createdAt: now,
            updatedAt: now,
          },
        },
      });
      const again = await startWorkers({
        config: loadConfig({ ...env, MONEYQ_LOG_LEVEL: "silent" }),
        connection,
        logger: createLogger("silent"),
        registry: new Registry(),
      });
      try {
        const results = await until(
          async () =>
            (await redis.resultEntries(ACCOUNTS, prefix)).map(([, fields]) =>
              JobResult.parse(JSON.parse(fields[1] as string)),
            ),
          (found) => found.length >= jobIds.length,
          20_000,
        );
        // Give a duplicate the time to show up.
        await new Promise((r) => setTimeout(r, 500));
        expect(await redis.resultEntries(ACCOUNTS, prefix)).toHaveLength(jobIds.length);
        expect(results.map((r) => r.jobId).sort()).toEqual([...jobIds].sort());
        expect(results.map((r) => r.result)).toEqual(Array(jobIds.length).fill("succeeded"));
      } finally {
        await again.close();
      }
    } finally {
      await upstream.close();
    }
  }, 60_000);

  it("a second signal ends it at once", async () => {
    const { child, upstream } = await hangingWorker(`${redis.prefix}-twice`);
    try {
      child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 100));
      child.kill("SIGTERM");
      // 1: exited on the second signal, not after a completed shutdown (0).
      expect(await exitOf(child)).toBe(1);
    } finally {
      await upstream.close();
    }
  }, 60_000);
});

describe("a request that cannot be sent", () => {
  it("is refused before dispatch, names the field, and leaves the connection pool whole", async () => {
    const upstream = await startScriptedServer();
    upstream.reply({ status: 400, body: { success: false, message: "checked by the provider" } });
    const client = new PaymentsClient({
      baseUrl: upstream.baseUrl,
      apiKey: ALPHA_KEY,
      connections: 1,
    });
    try {
      const body = {
        amount: 10,
        currency: "NGN" as const,
        bankCode: "044",
        accountNumber: "0123456789",
        accountName: "Ada Obi",
        bankName: "Access Bank",
      };
      for (const key of UNSENDABLE) {
        const error = await client.withdrawToBank({ body, idempotencyKey: key }).catch((e) => e);
        expect(error).toBeInstanceOf(PaymentsInvalidRequestError);
        expect(error).toMatchObject({
          code: "invalid_request",
          field: "idempotencyKey",
          mayHaveReachedServer: false,
        });
      }
      const dots = await client.getTransaction({ params: { transactionId: ".." } }).catch((e) => e);
      expect(dots).toMatchObject({ code: "invalid_request", field: "params.transactionId" });
      expect(upstream.requests).toHaveLength(0);
      // One connection, and it is still free: this request reaches the provider.
      const answered = await client
        .withdrawToBank({ body, idempotencyKey: "sendable-1" })
        .catch((e) => e);
      expect(answered).toMatchObject({ code: "validation_error", status: 400 });
      expect(upstream.requests).toHaveLength(1);
      expect(
        () => new PaymentsClient({ baseUrl: upstream.baseUrl, apiKey: "ключ-ключ-1" }),
      ).toThrow(/apiKey must hold only/);
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  it("when undici refuses it instead, is still 'not sent' and ends the job rejected", () => {
    const refused = Object.assign(new Error("invalid idempotencykey header"), {
      code: "UND_ERR_INVALID_ARG",
    });
    const error = toTransportError(refused, "withdrawToBank");
    expect(error).toBeInstanceOf(PaymentsInvalidRequestError);
    expect(error).toMatchObject({ field: "idempotencyKey", mayHaveReachedServer: false });
    for (const idempotent of [true, false]) {
      expect(
        classify(
          { type: "error", error },
          { phase: "submit", idempotent, lastAttempt: false, sentBefore: false },
        ),
      ).toEqual({
        type: "reject",
        code: "invalid_request",
        message:
          "idempotencyKey: refused by the HTTP client (UND_ERR_INVALID_ARG); the request was not sent",
      });
    }
    // A lookup of a job that was sent earlier: the outcome is unknown, never "rejected".
    expect(
      classify(
        { type: "error", error },
        { phase: "confirm", idempotent: true, lastAttempt: false, sentBefore: true },
      ),
    ).toMatchObject({ type: "needs_reconciliation", code: "invalid_request" });
  });
});

import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Keyspace, keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { type PrivateRedis, startPrivateRedis } from "../../src/redis/private-redis.js";
import { EventEnvelope } from "../../src/results/event-envelope.js";
import { JobResult } from "../../src/results/job-result.js";
import { installed } from "../helpers/installed.js";
import { call } from "../helpers/sandbox.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { bankCsv } from "../helpers/service.js";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process.js";
import { waitFor } from "../helpers/wait-until.js";

/**
 * An 800-row batch whose submission meets a Redis out of memory after its first chunk (the
 * service in its own process, the sandbox in its own, a private redis-server whose maxmemory
 * this test lowers). The client sees a 503, no row is sent, and the batch says its submission
 * failed; resubmitted, it completes once; left alone, it is cancelled after its lease.
 */
const PREFIX = "oomsubmit";
const ACCOUNT_ID = "acct_oom";
const KEY = "sk_sandbox_oom_submission_01";
const TOKEN = "tok_oom_submission_0123456789";
const ROWS = 800;

const sandbox = useSandboxProcess(["--settle-delay-ms", "20"]);
let redis: PrivateRedis;
let admin: Redis;
let service: ServiceProcess;
const space: Keyspace = keyspace(PREFIX);

beforeAll(async () => {
  redis = await startPrivateRedis(installed("redis-server", "redis-server"));
  admin = new Redis(redis.url);
  await sandbox.addAccount(ACCOUNT_ID, KEY);
  service = await startServiceProcess({
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sandbox.baseUrl,
    PAYMENTS_API_KEY: KEY,
    MONEYQ_REDIS_PREFIX: PREFIX,
    MONEYQ_RATE_LIMIT_PER_SECOND: "400",
    MONEYQ_API_TOKENS: JSON.stringify([{ name: "ops", token: TOKEN, accounts: ["default"] }]),
  });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  admin?.disconnect();
  await redis?.stop();
});

async function api(method: string, path: string, csv?: string) {
  const res = await fetch(`${service.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(csv !== undefined && { "content-type": "text/csv" }),
    },
    ...(csv !== undefined && { body: csv }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/**
 * Submits `csv` as batch `batchId` while Redis runs out of memory right after the batch's
 * first job is added (a keyspace notification of a job hash of the account's queue), and raises
 * the memory again 3 s later. Answers the submission's answer.
 */
async function submitIntoOutOfMemory(batchId: string, csv: string) {
  const watcher = new Redis(redis.url);
  await watcher.ping();
  await admin.config("SET", "notify-keyspace-events", "Kh");
  await watcher.psubscribe(`__keyspace@0__:${PREFIX}:payments-default:j_*`);
  const full = new Promise<void>((resolve) =>
    watcher.once("pmessage", () => {
      admin.config("SET", "maxmemory", "1").then(() => resolve());
    }),
  );
  try {
    const answer = await api("POST", `/v1/batches?kind=payout.bank&batchId=${batchId}`, csv);
    await full;
    return answer;
  } finally {
    watcher.disconnect();
    setTimeout(() => void admin.config("SET", "maxmemory", "0"), 3_000);
  }
}

/** The keys of a batch's rows that have a report line naming their job. */
async function keysOf(batchId: string): Promise<string[]> {
  const lines = await admin.hvals(`${PREFIX}:batch-rows:default:${batchId}`);
  return lines
    .map((l) => JSON.parse(l).idempotencyKey as string | undefined)
    .filter((k): k is string => k !== undefined);
}

/** Requests that reached the sandbox under any of `keys`. */
async function sentUnder(keys: readonly string[]): Promise<number> {
  const wanted = new Set(keys);
  return (await sandbox.requests(ACCOUNT_ID)).filter(
    (r) => r.idempotencyKey !== undefined && wanted.has(r.idempotencyKey),
  ).length;
}

/** The stream's results and events of one batch. */
async function streamOf(batchId: string) {
  const entries = await admin.xrange(resultsStreamKey(space, "default"), "-", "+");
  const events = entries.map(([, fields]) =>
    EventEnvelope.parse(JSON.parse(fields[fields.indexOf("event") + 1] as string)),
  );
  const mine = events.filter((e) => e.data.batchId === batchId);
  return {
    batchEvents: mine.filter((e) => e.type.startsWith("batch.")).map((e) => e.type),
    results: mine.filter((e) => e.type.startsWith("job.")).map((e) => JobResult.parse(e.data)),
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a batch submission that meets Redis out of memory", () => {
  it("answers 503, sends nothing, says so, and completes once resubmitted", async () => {
    const csv = bankCsv("oom-a", ROWS);
    const refused = await submitIntoOutOfMemory("oom-a", csv);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("redis_out_of_memory");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);

    // Memory back after 3 s; then 10 s more in which nothing of the batch may be sent.
    await pause(3_000 + 10_000);
    expect(await sentUnder(await keysOf("oom-a"))).toBe(0);
    const failed = await api("GET", "/v1/batches/oom-a");
    // Enqueued so far: the rows whose job exists (a chunk's report lines precede its jobs).
    expect(failed.body.state).toBe("submission_failed");
    expect(failed.body.accepted).toBeGreaterThan(0);
    expect(failed.body.accepted).toBeLessThan(ROWS);
    expect(Date.parse(failed.body.resumeBy)).toBeGreaterThan(Date.now());

    const resubmitted = await api("POST", "/v1/batches?kind=payout.bank&batchId=oom-a", csv);
    expect(resubmitted.status).toBe(202);
    const done = await waitFor(
      () => api("GET", "/v1/batches/oom-a"),
      (s) => s.body.finishedAt !== undefined,
      60_000,
      (s) => `the batch to finish (${JSON.stringify(s?.body)})`,
      250,
    );
    expect(done.body).toMatchObject({ state: "completed", accepted: ROWS });
    expect(done.body.counts.succeeded).toBe(ROWS);
    const { results } = await streamOf("oom-a");
    expect(results).toHaveLength(ROWS);
    expect(new Set(results.map((r) => r.jobId)).size).toBe(ROWS);
    // One effect per key at the provider.
    const ledger = await call(`${sandbox.controlUrl}/ledger`, "GET", {
      query: { accountId: ACCOUNT_ID },
    });
    const effects = new Map<string, Set<string>>();
    for (const e of ledger.body.data.entries as {
      idempotencyKey: string | null;
      effectId: string | null;
    }[]) {
      if (e.idempotencyKey === null || e.effectId === null) continue;
      effects.set(e.idempotencyKey, (effects.get(e.idempotencyKey) ?? new Set()).add(e.effectId));
    }
    const allKeys = await keysOf("oom-a");
    expect(allKeys).toHaveLength(ROWS);
    expect(allKeys.map((k) => effects.get(k)?.size ?? 0)).toEqual(allKeys.map(() => 1));
  }, 120_000);

  it("left alone, is cancelled after its lease, one cancelled result per enqueued row", async () => {
    const refused = await submitIntoOutOfMemory("oom-b", bankCsv("oom-b", ROWS));
    expect(refused.status).toBe(503);
    await pause(3_500);
    const failed = await api("GET", "/v1/batches/oom-b");
    expect(failed.body.state).toBe("submission_failed");
    const enqueued = failed.body.accepted as number;
    expect(enqueued).toBeGreaterThan(0);
    expect(enqueued).toBeLessThan(ROWS);

    // The lease is 30 s from its last renewal; the sweep runs every 5 s.
    const cancelled = await waitFor(
      () => api("GET", "/v1/batches/oom-b"),
      (s) => s.body.finishedAt !== undefined,
      60_000,
      (s) => `the batch to be cancelled (${JSON.stringify(s?.body)})`,
      500,
    );
    expect(cancelled.body).toMatchObject({
      state: "cancelled",
      cancelReason: "submission_abandoned",
      accepted: enqueued,
      counts: { cancelled: enqueued },
    });
    const { results, batchEvents } = await streamOf("oom-b");
    expect(batchEvents).toEqual(["batch.cancelled"]);
    expect(results).toHaveLength(enqueued);
    expect(new Set(results.map((r) => r.jobId)).size).toBe(enqueued);
    for (const r of results)
      expect(r).toMatchObject({ result: "cancelled", code: "submission_abandoned" });
    expect(await sentUnder(await keysOf("oom-b"))).toBe(0);
  }, 120_000);
});

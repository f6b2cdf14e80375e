import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyspace, resultsStreamKey } from "../../src/redis/keys.js";
import { type PrivateRedis, startPrivateRedis } from "../../src/redis/private-redis.js";
import { JobResult } from "../../src/results/job-result.js";
import { bankJob } from "../fixtures/batches.js";
import { installed } from "../helpers/installed.js";
import { call } from "../helpers/sandbox.js";
import { useSandboxProcess } from "../helpers/sandbox-process.js";
import { bankCsv } from "../helpers/service.js";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process.js";
import { waitFor } from "../helpers/wait-until.js";

/**
 * Redis out of memory for 5 s under a running service (`moneyq start`, API and workers, in its
 * own process; the sandbox in its own; a private redis-server whose maxmemory this test
 * lowers): every submission in the window answers 503 with Retry-After, /readyz is 503, the
 * log holds a few lines rather than one per worker loop, and once memory is back every job
 * ends once, with one effect per key at the provider.
 */
const PREFIX = "oomwindow";
const ACCOUNT_ID = "acct_oomw";
const KEY = "sk_sandbox_oom_window_00001";
const TOKEN = "tok_oom_window_0123456789ab";
const WINDOW_MS = 5_000;

const sandbox = useSandboxProcess(["--settle-delay-ms", "20"]);
let redis: PrivateRedis;
let admin: Redis;
let service: ServiceProcess;

beforeAll(async () => {
  redis = await startPrivateRedis(installed("redis-server", "redis-server"));
  admin = new Redis(redis.url);
  await sandbox.addAccount(ACCOUNT_ID, KEY);
  service = await startServiceProcess({
    REDIS_URL: redis.url,
    PAYMENTS_API_URL: sandbox.baseUrl,
    PAYMENTS_API_KEY: KEY,
    MONEYQ_REDIS_PREFIX: PREFIX,
    MONEYQ_RATE_LIMIT_PER_SECOND: "30",
    // A job whose finish Redis refused is taken back within seconds, not half a minute.
    MONEYQ_LOCK_DURATION_MS: "5000",
    MONEYQ_STALLED_INTERVAL_MS: "2000",
    MONEYQ_API_TOKENS: JSON.stringify([{ name: "ops", token: TOKEN, accounts: ["default"] }]),
  });
}, 60_000);

afterAll(async () => {
  await service?.stop();
  admin?.disconnect();
  await redis?.stop();
});

async function post(path: string, body: string, type = "application/json") {
  const res = await fetch(`${service.apiUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": type },
    body,
  });
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get("retry-after"), text };
}

const postJob = (reference: string) =>
  post("/v1/jobs", JSON.stringify(bankJob({ idempotencyKey: `single-${reference}` })));
const postBatch = (batchId: string) =>
  post(`/v1/batches?kind=payout.bank&batchId=${batchId}`, bankCsv(batchId, 5), "text/csv");

async function results(): Promise<JobResult[]> {
  const stream = resultsStreamKey(keyspace(PREFIX), "default");
  return (await admin.xrange(stream, "-", "+"))
    .filter(([, fields]) => fields[0] === "result")
    .map(([, fields]) => JobResult.parse(JSON.parse(fields[1] as string)));
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Redis out of memory for 5 s under a running service", () => {
  it("refuses with 503 and Retry-After, is not ready, logs a few lines, loses nothing", async () => {
    // 150 rows on their way when Redis fills up (30 a second: 5 s of sending).
    const before = await postBatch("before-oom");
    expect(before.status).toBe(202);
    const running = await post(
      "/v1/batches?kind=payout.bank&batchId=running-oom",
      bankCsv("running-oom", 150),
      "text/csv",
    );
    expect(running.status).toBe(202);
    await pause(1_500);

    const windowStart = Date.now();
    await admin.config("SET", "maxmemory", "1");
    const answers: Awaited<ReturnType<typeof post>>[] = [];
    const refused: { job: string[]; batch: string[] } = { job: [], batch: [] };
    const ready: number[] = [];
    for (let i = 0; Date.now() - windowStart < WINDOW_MS - 500; i += 1) {
      const reference = `in-window-${i}`;
      answers.push(await postJob(reference));
      refused.job.push(reference);
      if (i % 4 === 0) {
        answers.push(await postBatch(`window-${i}`));
        refused.batch.push(`window-${i}`);
      }
      // /readyz keeps an answer for a second: asked once that second has passed.
      if (Date.now() - windowStart > 1_100)
        ready.push((await fetch(`${service.apiUrl}/readyz`)).status);
      await pause(200);
    }
    await pause(Math.max(0, WINDOW_MS - (Date.now() - windowStart)));
    await admin.config("SET", "maxmemory", "0");
    const windowEnd = Date.now();

    // About 27 on an idle machine; a loaded one gets through fewer passes of the loop.
    expect(answers.length).toBeGreaterThan(10);
    for (const a of answers) {
      expect(a.status, a.text).toBe(503);
      expect(JSON.parse(a.text).error.code).toBe("redis_out_of_memory");
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    expect(ready.length).toBeGreaterThan(0);
    expect(ready).toEqual(ready.map(() => 503));

    // The client sends each refused submission again once Redis takes writes.
    await waitFor(
      async () => (await fetch(`${service.apiUrl}/readyz`)).status,
      (status) => status === 200,
      10_000,
      "readiness again",
      200,
    );
    for (const reference of refused.job) expect((await postJob(reference)).status).toBe(202);
    for (const batchId of refused.batch) expect((await postBatch(batchId)).status).toBe(202);

    const expected = 5 + 150 + refused.job.length + 5 * refused.batch.length;
    const all = await waitFor(
      results,
      (r) => r.length >= expected,
      120_000,
      (r) => `${expected} results (${r.length} so far)`,
      500,
    );
    await pause(1_000);
    const settled = await results();
    expect(settled).toHaveLength(all.length);
    expect(new Set(settled.map((r) => r.jobId)).size).toBe(expected);
    expect(settled).toHaveLength(expected);
    expect(settled.filter((r) => r.result !== "succeeded")).toEqual([]);
    // One effect per key at the provider, the one each result names.
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
    for (const r of settled)
      expect([...(effects.get(r.idempotencyKey) ?? [])]).toEqual([r.upstreamId]);

    // The log of the window, and of the lines that sum it up after it (every 10 s).
    await pause(11_000 - (Date.now() - windowEnd));
    const errorLines = service
      .logLines()
      .map((l) => JSON.parse(l) as { level: number; time: number; msg: string })
      .filter((l) => l.level >= 50 && l.time >= windowStart && l.time <= windowEnd + 11_000);
    expect(errorLines.length, JSON.stringify(errorLines.map((l) => l.msg))).toBeLessThan(50);
  }, 240_000);
});

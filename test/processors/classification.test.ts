import { Job, Queue } from "bullmq";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { registerRedisMetrics } from "../../src/metrics/redis-metrics.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { fingerprintKey, keyspace } from "../../src/redis/keys.js";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { usePipeline } from "../helpers/pipeline.js";
import { singleRedis } from "../helpers/redis.js";
import { waitFor, waitUntil } from "../helpers/wait-until.js";

const key = (name: string) => `sk_sandbox_classify_${name}_0001`;
const ACCOUNTS = {
  flaky: { errorRate: 0.3, seed: 5 },
  throttled: { rateLimitPerSecond: 4 },
  slow: {},
  dead: { errorRate: 1 },
  dropper: { dropAfterCommitRate: 1 },
  hanger: { hangRate: 1 },
  plain: {},
};
const BROKEN_KEY = "sk_sandbox_classify_broken_0001";

/** A scrape-time gauge as a process's registry would read it now. */
async function gauge(name: string) {
  const registry = new Registry();
  registerRedisMetrics(registry, {
    connection: p.connection(),
    prefix: p.config().redisPrefix,
    queues: p.workers().queues,
    pauses: p.workers().pauses,
    resultsStreams: [p.workers().results.streamKey("default")],
    cacheMs: 0,
  });
  return (await registry.getSingleMetric(name)?.get())?.values;
}

const p = usePipeline(
  {
    MONEYQ_MAX_ATTEMPTS: "3",
    MONEYQ_REQUEST_TIMEOUT_MS: "400",
    // Each row's own outcome, refusals for want of funds included: none holds its lane.
    MONEYQ_INSUFFICIENT_FUNDS: "fail",
    MONEYQ_CONFIRM_DEADLINE_MS: "2800",
    MONEYQ_ACCOUNTS: JSON.stringify([
      ...Object.keys(ACCOUNTS).map((alias) => ({ alias, apiKey: key(alias), concurrency: 4 })),
      { alias: "broken", apiKey: BROKEN_KEY, concurrency: 2 },
    ]),
  },
  {
    sandboxAccounts: [
      { accountId: "acct_demo", apiKey: DEMO_API_KEY },
      ...Object.entries(ACCOUNTS).map(([alias, faults]) => ({
        accountId: `acct_${alias}`,
        apiKey: key(alias),
        faults,
      })),
    ],
  },
);

let n = 0;
const payout = (account: string, amount = 100, accountNumber = "0123456789"): JobInput => ({
  kind: "payout.bank",
  account,
  idempotencyKey: `classify-${++n}`,
  request: {
    body: {
      amount,
      currency: "NGN",
      bankCode: "044",
      accountNumber,
      accountName: "Ada Obi",
      bankName: "Access Bank",
    },
  },
});

async function effects(accountId: string, idempotencyKey: string): Promise<string[]> {
  const entries = (await p.sb.control("GET", "/ledger", { query: { accountId } })).body.data
    .entries;
  return [
    ...new Set(
      entries
        .filter((e: { idempotencyKey: string }) => e.idempotencyKey === idempotencyKey)
        .map((e: { effectId: string }) => e.effectId),
    ),
  ] as string[];
}

/** Enqueues `job` and waits for its next terminal result. */
async function run(job: JobInput) {
  const jobId = p.producer().jobIdOf(job);
  const earlier = (await p.results()).filter((r) => r.jobId === jobId).length;
  await p.producer().enqueue(job);
  return p.resultOf(jobId, 30_000, earlier);
}

describe("each row of the classification table, driven through the sandbox", () => {
  it("200 with a terminal status: succeeded with the upstream data", async () => {
    const r = await run({
      kind: "wallet.create",
      account: "default",
      idempotencyKey: "w-ghs",
      request: { body: { currency: "ZAR" } },
    });
    expect(r).toMatchObject({
      result: "succeeded",
      upstreamId: expect.stringMatching(/^wal_/),
      attempts: 1,
    });
  });

  it("200 PENDING: confirmed by lookups until terminal", async () => {
    const job = payout("default");
    const r = await run(job);
    expect(r).toMatchObject({ result: "succeeded", upstreamStatus: "SUCCESSFUL" });
    expect(await effects("acct_demo", job.idempotencyKey as string)).toEqual([r.upstreamId]);
  });

  it("200 PENDING then FAILED: failed with the upstream message", async () => {
    const r = await run(payout("default", 100, "0000000001"));
    expect(r).toMatchObject({
      result: "failed",
      code: "upstream_failed",
      upstreamStatus: "FAILED",
    });
    expect(r.message).toBe("the beneficiary's institution rejected the transfer");
  });

  it("PENDING past the confirmation deadline: needs_reconciliation", async () => {
    const r = await run(payout("default", 100, "0000000002"));
    expect(r).toMatchObject({
      result: "needs_reconciliation",
      code: "confirm_deadline",
      upstreamStatus: "PENDING",
    });
  });

  it("400 validation and insufficient funds: failed at once, not retried", async () => {
    const noWallet = await run({
      ...payout("default"),
      request: { body: { ...(payout("x").request as { body: object }).body, currency: "CAD" } },
    } as JobInput);
    expect(noWallet).toMatchObject({ result: "failed", code: "validation_error", attempts: 1 });
    expect(noWallet.message).toContain("currency: this account has no CAD wallet");
    const poor = await run(payout("default", 100, "0000000004"));
    expect(poor).toMatchObject({ result: "failed", code: "insufficient_funds", attempts: 1 });
  });

  it("same key reused with another body: failed, loud", async () => {
    const first = payout("default");
    const r1 = await run(first);
    expect(r1.result).toBe("succeeded");
    const queue = new Queue(accountQueueName(singleRedis, "default"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    await (await Job.fromId(queue, r1.jobId))?.remove();
    await p.workers().results.forget("default", r1.jobId);
    // The producer would refuse another request under this key itself (its stored fingerprint):
    // forgotten too, so that the provider's own refusal is what this row classifies.
    await p.connection().del(fingerprintKey(keyspace(p.config().redisPrefix), "default", r1.jobId));
    await queue.close();
    const r2 = await run({
      ...first,
      request: { body: { ...(first.request as { body: object }).body, amount: 200 } },
    } as JobInput);
    expect(r2).toMatchObject({ result: "failed", code: "idempotency_key_reused" });
    expect(await effects("acct_demo", first.idempotencyKey as string)).toEqual([r1.upstreamId]);
  });

  it("5xx: retried with backoff and the same key, one effect", async () => {
    const jobs = Array.from({ length: 6 }, () => payout("flaky"));
    const results = await Promise.all(jobs.map((j) => run(j)));
    for (const [i, r] of results.entries()) {
      expect(r.result).not.toBe("failed");
      expect(
        (await effects("acct_flaky", jobs[i]?.idempotencyKey as string)).length,
      ).toBeLessThanOrEqual(1);
    }
    expect(results.some((r) => r.attempts > 1)).toBe(true);
  });

  it("timeout while the first request is in flight: 409, retried later with the same key, one effect", async () => {
    // Far slower than the client's 400 ms timeout plus a first backoff (at most 500 ms), so the
    // retry surely meets the first request still in flight; over well within the lookups' deadline.
    await p.sb.control("PUT", "/accounts/acct_slow/faults", { body: { latencyMs: 2000 } });
    const job = payout("slow");
    const jobId = p.producer().jobIdOf(job);
    await p.producer().enqueue(job);
    const reasons = async () =>
      (await p.workers().metrics.retries.get()).values
        .filter((v) => v.labels.account === "slow")
        .map((v) => v.labels.reason);
    await waitFor(
      reasons,
      (seen) => seen.includes("in_flight"),
      20_000,
      (seen) => `an in-flight retry; retries: ${seen}`,
      20,
    );
    await p.sb.control("DELETE", "/accounts/acct_slow/faults");
    const r = await p.resultOf(jobId);
    expect(r.result).toBe("succeeded");
    expect(r.attempts).toBeGreaterThan(1);
    expect(await reasons()).toEqual(expect.arrayContaining(["timeout", "in_flight"]));
    expect((await effects("acct_slow", job.idempotencyKey as string)).length).toBe(1);
  });

  it("connection dropped after commit: retried, the replay completes it, one effect", async () => {
    const job = payout("dropper");
    const r = await run(job);
    expect(r).toMatchObject({ result: "succeeded" });
    expect(await effects("acct_dropper", job.idempotencyKey as string)).toEqual([r.upstreamId]);
  });

  it("429: the account pauses for Retry-After, and the attempt is not counted", async () => {
    const jobs = Array.from({ length: 6 }, () => payout("throttled"));
    const results = await Promise.all(jobs.map((j) => run(j)));
    expect(results.filter((r) => r.result !== "succeeded")).toEqual([]);
    const pauses = await p.workers().metrics.rateLimitPauses.get();
    expect(
      pauses.values.find((v) => v.labels.account === "throttled" && v.labels.source === "upstream")
        ?.value,
    ).toBeGreaterThan(0);
    expect(Math.max(...results.map((r) => r.attempts))).toBe(1);
  });

  it("retries exhausted with the outcome unknown: looked up, then needs_reconciliation", async () => {
    const r = await run(payout("dead"));
    expect(r).toMatchObject({
      result: "needs_reconciliation",
      code: "outcome_unknown",
      attempts: 3,
    });
    const hung = await run(payout("hanger"));
    expect(hung).toMatchObject({ result: "needs_reconciliation", code: "outcome_unknown" });
  });

  it("retries exhausted, and the lookup finds the outcome: succeeded, never a new key", async () => {
    await p.sb.control("PUT", "/accounts/acct_plain/faults", { body: { errorRate: 1 } });
    const job = payout("plain");
    const { jobId } = await p.producer().enqueue(job);
    const queue = new Queue(accountQueueName(singleRedis, "plain"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    await waitUntil(
      async () => (await Job.fromId(queue, jobId))?.data.state?.phase === "reconcile",
      20_000,
      "the job to reach the lookup phase",
      20,
    );
    await p.sb.control("DELETE", "/accounts/acct_plain/faults");
    await queue.close();
    const r = await p.resultOf(jobId);
    expect(r).toMatchObject({ result: "succeeded", idempotencyKey: job.idempotencyKey });
    expect(await effects("acct_plain", job.idempotencyKey as string)).toEqual([r.upstreamId]);
  });

  it("non-idempotent job whose request may have arrived: needs_reconciliation, never resent", async () => {
    const before = (
      await p.sb.control("GET", "/requests", { query: { accountId: "acct_dropper" } })
    ).body.data.requests.length;
    const r = await run({
      kind: "wallet.create",
      account: "dropper",
      idempotencyKey: "w-drop",
      request: { body: { currency: "ZAR" } },
    });
    expect(r).toMatchObject({ result: "needs_reconciliation", code: "outcome_unknown" });
    expect(await gauge("moneyq_needs_reconciliation_jobs")).toContainEqual(
      expect.objectContaining({ labels: { account: "dropper" }, value: 1 }),
    );
    const after = (await p.sb.control("GET", "/requests", { query: { accountId: "acct_dropper" } }))
      .body.data.requests;
    expect(
      after.slice(before).filter((x: { path: string }) => x.path.endsWith("/wallet")),
    ).toHaveLength(1);
  });

  it("401: the account pauses instead of failing the batch, and resuming finishes it", async () => {
    const jobs = [payout("broken"), payout("broken")];
    const enqueued = await Promise.all(jobs.map((j) => p.producer().enqueue(j)));
    await waitUntil(
      async () => (await p.workers().pauses.list()).length > 0,
      10_000,
      "the account to pause",
      20,
    );
    expect(await p.workers().pauses.list()).toEqual([
      expect.objectContaining({
        account: "broken",
        reason: expect.stringContaining("unknown sandbox API key"),
      }),
    ]);
    expect(await gauge("moneyq_account_paused")).toContainEqual(
      expect.objectContaining({ labels: { account: "broken" }, value: 1 }),
    );
    const queue = new Queue(accountQueueName(singleRedis, "broken"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    expect(await queue.isPaused()).toBe(true);
    expect((await p.results()).filter((r) => r.account === "broken")).toEqual([]);
    expect(await queue.getFailedCount()).toBe(0);
    await queue.close();
    // The operator fixes the key at the provider, then resumes.
    await p.sb.control("POST", "/accounts", {
      body: { accountId: "acct_broken", apiKey: BROKEN_KEY },
    });
    await p.workers().pauses.resume("broken");
    expect(await gauge("moneyq_account_paused")).toContainEqual(
      expect.objectContaining({ labels: { account: "broken" }, value: 0 }),
    );
    for (const e of enqueued) expect((await p.resultOf(e.jobId)).result).toBe("succeeded");
  });

  it("a bad payload is rejected naming the field, without any request upstream", async () => {
    const queue = new Queue(accountQueueName(singleRedis, "plain"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    const before = (await p.sb.control("GET", "/requests", { query: { accountId: "acct_plain" } }))
      .body.data.requests.length;
    const bad = payout("plain", 100, "01234567890");
    const job = await queue.add(
      "payout.bank",
      { envelope: bad },
      { jobId: "bad-payload-1", attempts: 3 },
    );
    await queue.close();
    const r = await p.resultOf(job.id as string);
    expect(r).toMatchObject({
      result: "rejected",
      code: "validation_error",
      message: "request.body.accountNumber: at most 10 characters",
      attempts: 1,
    });
    const after = (await p.sb.control("GET", "/requests", { query: { accountId: "acct_plain" } }))
      .body.data.requests.length;
    expect(after).toBe(before);
  });
});

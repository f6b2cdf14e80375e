import { describe, expect, it } from "vitest";
import { DeadLetters } from "../../src/queues/dead-letters.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys, jobKeyOf } from "../../src/redis/bullmq-internals.js";
import { SENT_FIELD } from "../../src/redis/keys.js";
import { type PipelineHarness, usePipeline } from "../helpers/pipeline.js";
import { waitUntil } from "../helpers/wait-until.js";

// A kind without an idempotency key is recorded "sent" by the gate as its request leaves. When
// the provider refuses the request before processing it (429, a refused key), the record goes:
// the job is sent again once the pause ends, instead of ending "outcome unknown".
const KEY = "sk_sandbox_keyless_unsent_01";
const LATER_KEY = "sk_sandbox_keyless_later_001";
const p = usePipeline(
  {
    MONEYQ_MAX_ATTEMPTS: "2",
    MONEYQ_ACCOUNTS: JSON.stringify([
      { alias: "keyless", apiKey: KEY, ratePerSecond: 20, concurrency: 4 },
      // A key the provider does not know yet.
      { alias: "later", apiKey: LATER_KEY, ratePerSecond: 20, concurrency: 4 },
    ]),
  },
  { sandboxAccounts: [{ accountId: "acct_keyless", apiKey: KEY }] },
);

// Nothing listens on port 1: every connection is refused, so no request ever leaves.
const nowhere = usePipeline({
  MONEYQ_MAX_ATTEMPTS: "2",
  PAYMENTS_API_URL: "http://127.0.0.1:1/v1",
});

const virtualAccount = (account: string, key: string) => ({
  kind: "collection.virtual-account" as const,
  account,
  idempotencyKey: key,
  request: { body: { amount: 1000, validFor: 30 } },
});

interface Logged {
  readonly path: string;
  readonly rateLimited?: boolean;
}
const created = async (accountId: string) =>
  (
    (await p.sb.control("GET", "/requests", { query: { accountId } })).body.data
      .requests as Logged[]
  ).filter((r) => r.path.includes("virtual-account"));

const sentRecord = async (h: PipelineHarness, account: string, jobId: string) =>
  h.connection().hexists(
    jobKeyOf({
      queueQualifiedName: bullKeys.queue(
        h.config().redisPrefix,
        accountQueueName(h.space(), account),
      ),
      id: jobId,
      // biome-ignore lint/suspicious/noExplicitAny: only the two fields jobKeyOf reads.
    } as any),
    SENT_FIELD,
  );

describe("a request of a kind without a key, refused before it was processed", () => {
  it("a 429: sent again after the pause, one virtual account a job, every job succeeded", async () => {
    await p.sb.control("PUT", "/accounts/acct_keyless/faults", {
      body: { rateLimitPerSecond: 2, rateLimitRetryAfterSeconds: 1 },
    });
    try {
      const jobs = 6;
      const enqueued = await p
        .producer()
        .enqueueMany(
          Array.from({ length: jobs }, (_, i) => virtualAccount("keyless", `va-429-${i}`)),
        );
      const results = await Promise.all(enqueued.map((e) => p.resultOf(e.jobId, 30_000)));
      expect(results.map((r) => r.result)).toEqual(Array(jobs).fill("succeeded"));
      const log = await created("acct_keyless");
      expect(
        log.filter((r) => r.rateLimited).length,
        "the provider's limit was hit",
      ).toBeGreaterThan(0);
      // Each job's request was processed once: one virtual account each.
      expect(log.filter((r) => !r.rateLimited)).toHaveLength(jobs);
      expect(new Set(results.map((r) => r.upstreamId)).size).toBe(jobs);
    } finally {
      await p.sb.control("DELETE", "/accounts/acct_keyless/faults");
    }
  });

  it("a refused key: the account pauses, the job is not recorded sent, and it is sent once resumed", async () => {
    const { jobId } = await p.producer().enqueue(virtualAccount("later", "va-refused-key"));
    const pauses = p.workers().pauses;
    await waitUntil(
      async () => (await pauses.list()).some((x) => x.account === "later"),
      20_000,
      "the account's pause",
    );
    // The worker hands the job back after it stored the pause.
    await waitUntil(
      async () => (await sentRecord(p, "later", jobId)) === 0,
      5_000,
      "the sent record dropped",
    );
    // The provider learns the key; the operator resumes the account.
    await p.sb.control("POST", "/accounts", {
      body: { accountId: "acct_later", apiKey: LATER_KEY },
    });
    await pauses.resume("later");
    expect(await p.resultOf(jobId, 20_000)).toMatchObject({ result: "succeeded" });
    expect(await created("acct_later")).toHaveLength(1);
  });
});

describe("a request of a kind without a key that never reached the provider", () => {
  it("ends needs_reconciliation not_sent, and its replay is not refused", async () => {
    const { jobId } = await nowhere.producer().enqueue(virtualAccount("default", "va-never-sent"));
    const first = await nowhere.resultOf(jobId, 30_000);
    expect(first).toMatchObject({ result: "needs_reconciliation", code: "not_sent" });
    expect(await sentRecord(nowhere, "default", jobId)).toBe(0);
    const letters = new DeadLetters(
      nowhere.connection(),
      nowhere.config().redisPrefix,
      nowhere.workers().results,
    );
    expect(await letters.replay("default", jobId)).toBe(true);
    // Sent again, and again refused a connection: not stopped as "sent before".
    expect(await nowhere.resultOf(jobId, 30_000, 1)).toMatchObject({ code: "not_sent" });
  });
});

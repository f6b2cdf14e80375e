import { Readable } from "node:stream";
import { Queue } from "bullmq";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { BatchRefusedError } from "../../src/batches/batch-errors.js";
import { csvRows } from "../../src/batches/batch-rows.js";
import { Batches } from "../../src/batches/batches.js";
import { IdempotencyKeyReusedError } from "../../src/queues/enqueue-error.js";
import { deriveIdempotencyKey, jobIdFor } from "../../src/queues/idempotency-key.js";
import type { JobEnvelope, JobInput } from "../../src/queues/job-envelope.js";
import { ENQUEUE_CHUNK, Producer } from "../../src/queues/producer.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import {
  CLAIM_HOLD_MS,
  RequestFingerprints,
  requestFingerprint,
} from "../../src/queues/request-fingerprint.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import type { RedisConnection } from "../../src/redis/connection.js";
import { batchKeys, fingerprintKey, resultMarkerKey } from "../../src/redis/keys.js";
import { ResultsStore } from "../../src/results/results-store.js";
import { bankJob } from "../fixtures/batches.js";
import { withHook } from "../helpers/hooks.js";
import { useTestRedis } from "../helpers/redis.js";

// The stored fingerprint is checked against the job actually stored; no worker runs here, so
// every job enqueued stays in its queue to be counted.
const redis = useTestRedis("fp");
const RETENTION_MS = 3_600_000;
const connections: RedisConnection[] = [];
const opened: { close(): Promise<void> }[] = [];

function producerOn(connection: RedisConnection = redis.connect()): Producer {
  connections.push(connection);
  const producer = new Producer({
    connection,
    prefix: redis.prefix,
    accounts: ["alpha"],
    maxAttempts: 3,
    retentionMs: RETENTION_MS,
  });
  opened.push(producer);
  return producer;
}

async function jobCount(): Promise<number> {
  const queue = new Queue(accountQueueName(redis.space(), "alpha"), {
    connection: redis.connect(),
    prefix: redis.prefix,
  });
  try {
    return await queue.count();
  } finally {
    await queue.close();
  }
}

const job = (key: string, amount = 150, extra: Partial<JobInput> = {}): JobInput =>
  bankJob({ account: "alpha", idempotencyKey: key, ...extra }, { amount }) as JobInput;

// Every job of these tests is alpha's.
const fpKey = (jobId: string) => fingerprintKey(redis.space(), "alpha", jobId);

const csv = (rows: number, amount: number) =>
  [
    "reference,amount,currency,bankCode,accountNumber,accountName,bankName",
    ...Array.from(
      { length: rows },
      (_, i) => `r${i + 1},${amount},NGN,044,0123456789,Ada Obi,Access Bank`,
    ),
  ].join("\n");

function batchesOn(producer: Producer): Batches {
  const connection = redis.connect();
  return new Batches({
    connection,
    prefix: redis.prefix,
    producer,
    results: new ResultsStore(connection, {
      prefix: redis.prefix,
      retentionMs: RETENTION_MS,
      maxLen: 1000,
    }),
  });
}

afterEach(async () => {
  vi.restoreAllMocks();
  await redis.clean();
});
afterAll(async () => {
  await Promise.allSettled(opened.map((o) => o.close()));
});

describe("a batch whose row key holds another request", () => {
  it("is refused before anything is enqueued, however often it is sent", async () => {
    const producer = producerOn();
    const batches = batchesOn(producer);
    // A job enqueued alone under the key the batch derives for its row r950.
    await producer.enqueue({
      ...job("unused"),
      idempotencyKey: undefined,
      batchId: "pay-1",
      reference: "r950",
      request: job("x", 777).request,
    } as JobInput);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await batches
        .submit({
          account: "alpha",
          kind: "payout.bank",
          batchId: "pay-1",
          source: csvRows(Readable.from([csv(1000, 100)]), "payout.bank"),
        })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BatchRefusedError);
      expect((refused as BatchRefusedError).issues).toEqual([
        expect.objectContaining({
          row: 950,
          reference: "r950",
          rule: expect.stringMatching(/^idempotency_key_reused: job j_/),
        }),
      ]);
      expect(await jobCount()).toBe(1);
      expect(await redis.connect().exists(batchKeys(redis.space(), "alpha", "pay-1").meta)).toBe(0);
    }
  });

  it("found only while sending, is a row issue: the other rows go on and the batch is queued", async () => {
    const producer = producerOn();
    const conflicting = deriveIdempotencyKey("alpha", "pay-2", "r950");
    // After the check, before any row is sent, another request takes row r950's key. Chunks
    // are sent several at once, so every send waits for that request to have landed.
    const original = producer.enqueueUnlessReused.bind(producer);
    let taken: Promise<unknown> | undefined;
    producer.enqueueUnlessReused = async (envelopes) => {
      taken ??= producerOn().enqueue(job(conflicting, 777));
      await taken;
      return original(envelopes);
    };
    const report = await batchesOn(producer).submit({
      account: "alpha",
      kind: "payout.bank",
      batchId: "pay-2",
      source: csvRows(Readable.from([csv(1000, 100)]), "payout.bank"),
    });
    expect(report.issues).toEqual([
      expect.objectContaining({ row: 950, rule: expect.stringMatching(/^idempotency_key_reused/) }),
    ]);
    expect(report).toMatchObject({ created: true, accepted: 999, invalid: 1 });
    expect(report.status).toMatchObject({ state: "queued", accepted: 999, invalid: 1 });
    expect(await jobCount()).toBe(1000);
    const lines = [];
    for await (const line of batchesOn(producer).report("alpha", "pay-2")) lines.push(line);
    expect(lines[949]).toMatchObject({ row: 950, result: "invalid" });
    expect(lines.filter((l) => l.result === "queued")).toHaveLength(999);
  });
});

describe("a batch submission that stopped while sending", () => {
  it("is finished by the next one even when a row's key was taken since: that row is an issue", async () => {
    const producer = producerOn();
    const submit = (batches: Batches) =>
      batches.submit({
        account: "alpha",
        kind: "payout.bank",
        batchId: "pay-3",
        source: csvRows(Readable.from([csv(1000, 100)]), "payout.bank"),
      });
    // The chunk holding r950 fails (Redis went away): every other chunk was enqueued.
    const failing = withHook(producer, "enqueueUnlessReused", async (_call, [envelopes]) => {
      if ((envelopes as JobEnvelope[]).some((e) => e.reference === "r950"))
        throw new Error("connection lost");
    });
    await expect(submit(batchesOn(failing))).rejects.toThrow("connection lost");
    expect(await jobCount()).toBe(900);
    await producerOn().enqueue(job(deriveIdempotencyKey("alpha", "pay-3", "r950"), 777));

    const report = await submit(batchesOn(producer));
    expect(report.issues).toEqual([
      expect.objectContaining({ row: 950, rule: expect.stringMatching(/^idempotency_key_reused/) }),
    ]);
    expect(report.status).toMatchObject({ state: "queued", accepted: 999, invalid: 1 });
    expect(await jobCount()).toBe(1000);
  });
});

describe("the fingerprint is checked against the stored job", () => {
  it("a job whose fingerprint is missing is compared by its own envelope", async () => {
    const producer = producerOn();
    const first = await producer.enqueue(job("fp-a"));
    // A job enqueued before fingerprints were kept, or one that outlived its fingerprint.
    await redis.connect().del(fpKey(first.jobId));
    await expect(producer.enqueueKeyed(job("fp-a", 999))).rejects.toSatisfy(
      (e) => e instanceof IdempotencyKeyReusedError && e.jobId === first.jobId,
    );
    expect(await producer.enqueueKeyed(job("fp-a"))).toEqual({ job: first, replayed: true });
    // A wrong fingerprint (stored by an earlier release) is corrected from the job.
    await redis.connect().set(fpKey(first.jobId), "another-request");
    expect(await producer.enqueueKeyed(job("fp-a"))).toEqual({ job: first, replayed: true });
    expect(await redis.connect().get(fpKey(first.jobId))).toBe(
      requestFingerprint(producer.envelopeOf(job("fp-a"))),
    );
    expect(await jobCount()).toBe(1);
  });

  it("a claim whose job was never added is not a replay, and frees the key soon", async () => {
    const producer = producerOn();
    const connection = redis.connect();
    const envelope = producer.envelopeOf(job("fp-b"));
    const jobId = jobIdFor("alpha", "fp-b");
    // A producer that claimed the key and died before its addBulk.
    const entry = {
      account: "alpha",
      jobId,
      jobKey: bullKeys.job(
        bullKeys.queue(redis.prefix, accountQueueName(redis.space(), "alpha")),
        jobId,
      ),
      markerKey: resultMarkerKey(redis.space(), "alpha", jobId),
      fingerprint: requestFingerprint(envelope),
    };
    await new RequestFingerprints(connection, redis.prefix, 2 * RETENTION_MS).claim([entry], true);
    const ttl = await connection.pttl(fpKey(jobId));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(CLAIM_HOLD_MS);
    const retried = await producer.enqueueKeyed(job("fp-b"));
    expect(retried.replayed).toBe(false);
    expect(await jobCount()).toBe(1);
    // Once the job exists, its envelope decides even after the claim ran out.
    await connection.del(fpKey(jobId));
    expect((await producer.enqueueKeyed(job("fp-b"))).replayed).toBe(true);
    await expect(producer.enqueueKeyed(job("fp-b", 999))).rejects.toBeInstanceOf(
      IdempotencyKeyReusedError,
    );
  });

  it("a failed addBulk gives its claim back: the retry, same or corrected, is a new job", async () => {
    const producer = producerOn();
    vi.spyOn(Queue.prototype, "addBulk").mockRejectedValueOnce(new Error("connection lost"));
    await expect(producer.enqueueKeyed(job("fp-c"))).rejects.toThrow("connection lost");
    expect(await redis.connect().exists(fpKey(jobIdFor("alpha", "fp-c")))).toBe(0);
    const corrected = await producer.enqueueKeyed(job("fp-c", 175));
    expect(corrected.replayed).toBe(false);
    expect(await jobCount()).toBe(1);

    vi.spyOn(Queue.prototype, "addBulk").mockRejectedValueOnce(new Error("connection lost"));
    await expect(producer.enqueueKeyed(job("fp-d"))).rejects.toThrow("connection lost");
    expect((await producer.enqueueKeyed(job("fp-d"))).replayed).toBe(false);
    expect(await jobCount()).toBe(2);
  });

  it("a finished job's fingerprint is kept past its result marker, and decides once the job is gone", async () => {
    const producer = producerOn();
    const connection = redis.connect();
    const first = await producer.enqueue(job("fp-e"));
    // The job ran longer than its fingerprint was to be kept.
    await connection.pexpire(fpKey(first.jobId), 1_000);
    const results = new ResultsStore(connection, {
      prefix: redis.prefix,
      retentionMs: RETENTION_MS,
      maxLen: 1000,
    });
    const now = new Date().toISOString();
    await results.emit({
      ...first,
      kind: "payout.bank",
      result: "succeeded",
      attempts: 1,
      enqueuedAt: now,
      finishedAt: now,
      durationMs: 0,
    });
    expect(await connection.pttl(fpKey(first.jobId))).toBeGreaterThan(RETENTION_MS);
    // Removed at the end of its retention, its result is still there: the fingerprint decides.
    expect(await producer.remove("alpha", first.jobId)).toBe(true);
    await expect(producer.enqueueKeyed(job("fp-e", 999))).rejects.toBeInstanceOf(
      IdempotencyKeyReusedError,
    );
    expect((await producer.enqueueKeyed(job("fp-e"))).replayed).toBe(true);
    // A replay of a job that has its result does not enqueue it again.
    expect(await jobCount()).toBe(0);
  });

  it("of two concurrent requests under one key with different bodies, one is enqueued and one refused", async () => {
    const producer = producerOn();
    const settled = await Promise.allSettled([
      producer.enqueueKeyed(job("fp-race", 100)),
      producerOn().enqueueKeyed(job("fp-race", 200)),
    ]);
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
    const refused = settled.find((s) => s.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await jobCount()).toBe(1);
  });
});

describe("enqueueMany", () => {
  it("claims every chunk before it adds a job: a key taken between chunks leaves nothing enqueued", async () => {
    const connection = redis.connect();
    const producer = producerOn(connection);
    const count = ENQUEUE_CHUNK * 2;
    const inputs = Array.from({ length: count }, (_, i) => job(`many-${i}`));
    const late = ENQUEUE_CHUNK + 200;
    // Another request takes the key of a job in the second chunk just before that chunk is claimed.
    const claims = connection as RedisConnection &
      Record<string, (...args: unknown[]) => Promise<unknown>>;
    const original = claims.moneyqClaimFingerprints?.bind(connection);
    expect(original).toBeDefined();
    let calls = 0;
    claims.moneyqClaimFingerprints = async (...args: unknown[]) => {
      calls += 1;
      if (calls === 2) await producerOn().enqueue(job(`many-${late}`, 999));
      return (original as (...a: unknown[]) => Promise<unknown>)(...args);
    };
    await expect(producer.enqueueMany(inputs)).rejects.toSatisfy(
      (e) => e instanceof IdempotencyKeyReusedError && e.index === late,
    );
    // Only the other request's job; the first chunk's claims were given back.
    expect(await jobCount()).toBe(1);
    expect(await connection.exists(fpKey(jobIdFor("alpha", "many-0")))).toBe(0);
  });
});

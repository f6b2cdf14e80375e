import { Job, Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { DeadLetters } from "../../src/queues/dead-letters.js";
import { EnqueueValidationError } from "../../src/queues/enqueue-error.js";
import { deriveIdempotencyKey, jobIdFor } from "../../src/queues/idempotency-key.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { payoutBatch } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";

const p = usePipeline({ MONEYQ_MAX_ATTEMPTS: "2" });

async function effectsOf(key: string): Promise<string[]> {
  const entries = (await p.sb.control("GET", "/ledger")).body.data.entries;
  return [
    ...new Set(
      entries
        .filter((e: { idempotencyKey: string }) => e.idempotencyKey === key)
        .map((e: { effectId: string }) => e.effectId),
    ),
  ] as string[];
}

describe("producers", () => {
  it("derive the same key for the same account, batch and reference, and use the caller's key as given", () => {
    const [job] = payoutBatch("b-1", 1);
    const envelope = p.producer().envelopeOf(job as JobInput);
    expect(envelope.idempotencyKey).toBe(deriveIdempotencyKey("default", "b-1", "row-1"));
    // Pinned: a key that changed between releases would let resubmitted work be paid twice.
    expect(deriveIdempotencyKey("default", "b-1", "row-1")).toBe(
      "mq_i2JK53in2QkjnR-jbS9j2wTRKXkNsHr5wi5vqCxc",
    );
    expect(jobIdFor("default", "mq_abc")).toBe("j_1005d3fb8c21b915bf37e89a3eeed8c2d232d52f");
    expect(deriveIdempotencyKey("default", "b-1", "row-2")).not.toBe(
      deriveIdempotencyKey("default", "b-1", "row-1"),
    );
    expect(deriveIdempotencyKey("other", "b-1", "row-1")).not.toBe(
      deriveIdempotencyKey("default", "b-1", "row-1"),
    );
    expect(
      p.producer().envelopeOf({ ...(job as JobInput), idempotencyKey: "mine-1" }).idempotencyKey,
    ).toBe("mine-1");
  });

  it("enqueueing the same work twice gives one job and one upstream effect", async () => {
    const batch = payoutBatch("twice", 3);
    const first = await p.producer().enqueueMany(batch);
    const second = await p.producer().enqueueMany(batch);
    expect(second.map((j) => j.jobId)).toEqual(first.map((j) => j.jobId));
    const results = (await p.waitForResults(3)).filter((r) => r.batchId === "twice");
    expect(results).toHaveLength(3);
    const queue = new Queue(accountQueueName(p.space(), "default"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    const counts = await queue.getJobCounts("completed", "failed", "waiting", "active", "delayed");
    await queue.close();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(3);
    for (const j of first) expect((await effectsOf(j.idempotencyKey)).length).toBe(1);
  });

  it("re-enqueueing work whose job was removed reaches the same key: no second effect", async () => {
    const [job] = payoutBatch("removed", 1);
    const { jobId, idempotencyKey } = await p.producer().enqueue(job as JobInput);
    const first = await p.resultOf(jobId);
    const queue = new Queue(accountQueueName(p.space(), "default"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    await (await Job.fromId(queue, jobId))?.remove();
    await p.workers().results.forget("default", jobId);
    await queue.close();
    const again = await p.producer().enqueue(job as JobInput);
    // Its payment may repeat an earlier test's under another key (`repeats`): that is reported, not refused.
    expect(again).toMatchObject({ jobId, account: "default", idempotencyKey });
    const second = await p.resultOf(jobId, 20_000, 1);
    expect(second).toMatchObject({ result: "succeeded", upstreamId: first.upstreamId });
    expect(await effectsOf(idempotencyKey)).toEqual([first.upstreamId]);
  });

  it("refuse bad jobs at enqueue with field-level errors, and enqueue nothing of a bad batch", async () => {
    const good = payoutBatch("refused", 2);
    const bad = {
      kind: "payout.bank",
      account: "nobody",
      batchId: "refused",
      reference: "row-x",
      request: {
        body: {
          amount: -1,
          currency: "NGN",
          bankCode: "044",
          accountNumber: "01234567890",
          accountName: "A",
          bankName: "B",
        },
      },
    } as JobInput;
    const error = await p
      .producer()
      .enqueueMany([...good, bad])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnqueueValidationError);
    const e = error as EnqueueValidationError;
    expect(e.code).toBe("invalid_job");
    expect(e.index).toBe(2);
    expect(e.issues).toEqual([
      { field: "request.body.amount", rule: "greater than 0" },
      { field: "request.body.accountNumber", rule: "at most 10 characters" },
    ]);
    const unknown = await p
      .producer()
      .enqueue({ ...(good[0] as JobInput), account: "nobody" })
      .catch((x: unknown) => x);
    expect((unknown as EnqueueValidationError).issues).toEqual([
      { field: "account", rule: 'no account is configured with alias "nobody"' },
    ]);
    const noKey = await p
      .producer()
      .enqueue({ ...(good[0] as JobInput), batchId: undefined })
      .catch((x: unknown) => x);
    expect((noKey as EnqueueValidationError).message).toBe(
      "job: idempotencyKey: required unless batchId and reference are given",
    );
    const queue = new Queue(accountQueueName(p.space(), "default"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    for (const j of good) expect(await queue.getJob(p.producer().jobIdOf(j))).toBeUndefined();
    await queue.close();
  });
});

describe("dead letters", () => {
  it("keep failed and needs_reconciliation jobs inspectable, and a replay re-runs the same job with the same key", async () => {
    const account = (await p.sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
    await p.sb.control("PUT", `/accounts/${account}/faults`, { body: { errorRate: 1 } });
    const job: JobInput = { ...(payoutBatch("dead", 1)[0] as JobInput), idempotencyKey: "dead-1" };
    const { jobId } = await p.producer().enqueue(job);
    const failed = await p.resultOf(jobId, 60_000);
    expect(failed.result).toBe("needs_reconciliation");
    const letters = new DeadLetters(p.connection(), p.config().redisPrefix, p.workers().results);
    const listed = await letters.list("default");
    expect(listed).toContainEqual(
      expect.objectContaining({
        jobId,
        idempotencyKey: "dead-1",
        kind: "payout.bank",
        result: failed,
      }),
    );

    await p.sb.control("DELETE", `/accounts/${account}/faults`);
    expect(await letters.replay("default", jobId)).toBe(true);
    const replayed = await p.resultOf(jobId, 20_000, 1);
    expect(replayed).toMatchObject({ result: "succeeded", idempotencyKey: "dead-1" });
    expect(await effectsOf("dead-1")).toEqual([replayed.upstreamId]);
    expect((await letters.list("default")).map((l) => l.jobId)).not.toContain(jobId);
    expect(await letters.replay("default", "no-such-job")).toBe(false);
  });
});

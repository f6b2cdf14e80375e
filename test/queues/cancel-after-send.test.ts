import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bankJob } from "../fixtures/batches.js";
import {
  ALPHA_TOKEN,
  jobFinished,
  jobStatus,
  sentWithKey,
  until,
  useService,
} from "../helpers/service.js";

// The first lookup of a PENDING payout comes 3 s after it: time to cancel a job whose request
// has left and which waits, unlocked, in BullMQ's delayed set.
const h = useService({ MONEYQ_CONFIRM_FIRST_DELAY_MS: "3000" });

const enqueue = (body: unknown) => h.api("POST", "/v1/jobs", { token: ALPHA_TOKEN, body });
const status = (jobId: string) => jobStatus(h, jobId);
const finished = (jobId: string) => jobFinished(h, jobId);
const sentWith = (key: string) => sentWithKey(h, key);
const cancel = (jobId: string) => h.api("POST", `/v1/jobs/${jobId}/cancel`, { token: ALPHA_TOKEN });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The job as BullMQ keeps it, to read or write its data as a worker would have. */
const bullJob = async (jobId: string) => {
  const queue = new Queue(accountQueueName(h.space(), "alpha"), {
    connection: h.redis(),
    prefix: h.space().prefix,
  });
  const job = await queue.getJob(jobId);
  return { job, close: () => queue.close() };
};

describe("cancelling a job whose request may have left", () => {
  it("a job confirming a PENDING answer is not cancellable: 409, and it ends as the provider says", async () => {
    const key = "cancel-confirming";
    // The sandbox answers a payout PENDING and settles it 20 ms later.
    const { jobId } = (await enqueue(bankJob({ idempotencyKey: key }, { amount: 100 }))).body;
    await until(
      () => sentWith(key),
      (n) => n === 1,
    );
    await until(
      () => status(jobId),
      (r) => r.body?.state === "delayed",
    );
    const refused = await cancel(jobId);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("job_not_cancellable");
    expect(refused.body.error.message).toContain("sent already");
    const done = await finished(jobId);
    expect(done.body.result).toMatchObject({ result: "succeeded" });
    expect(await sentWith(key)).toBe(1);
  });

  it("a job an earlier attempt may have sent ends needs_reconciliation, never 'cancelled before it was sent', and sends nothing more", async () => {
    const key = "cancel-maybe-sent";
    const notBefore = new Date(Date.now() + 4_000).toISOString();
    const { jobId } = (await enqueue(bankJob({ idempotencyKey: key, notBefore }, { amount: 100 })))
      .body;
    // As a worker records it when an attempt's answer is lost: it may have reached the provider.
    const { job, close } = await bullJob(jobId);
    await job?.updateData({ ...job.data, state: { phase: "submit", possiblySent: true } });
    await close();
    const cancelled = await cancel(jobId);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.outcome).toBe("needs_reconciliation");
    expect((await status(jobId)).body.result).toMatchObject({
      result: "needs_reconciliation",
      code: "cancelled_maybe_sent",
    });
    await pause(Date.parse(notBefore) - Date.now() + 1_000);
    expect(await sentWith(key)).toBe(0);
  });

  it("a job never sent is still cancelled as before", async () => {
    const key = "cancel-unsent";
    const notBefore = new Date(Date.now() + 60_000).toISOString();
    const { jobId } = (await enqueue(bankJob({ idempotencyKey: key, notBefore }, { amount: 100 })))
      .body;
    const cancelled = await cancel(jobId);
    expect(cancelled.body.outcome).toBe("cancelled");
    expect((await status(jobId)).body.result).toMatchObject({
      result: "cancelled",
      code: "job_cancelled",
    });
  });

  it("a job whose run recorded 'cancelled' and died before BullMQ moved it ends completed, never a dead letter a replay would send", async () => {
    const key = "cancel-recorded-then-died";
    const notBefore = new Date(Date.now() + 2_000).toISOString();
    const { jobId } = (await enqueue(bankJob({ idempotencyKey: key, notBefore }, { amount: 100 })))
      .body;
    // What the run had written when it died: its state, and the cancelled result on the stream.
    const { job, close } = await bullJob(jobId);
    await job?.updateData({ ...job.data, state: { phase: "submit" } });
    await close();
    const now = new Date().toISOString();
    expect(
      await h.service().results.emit({
        jobId,
        kind: "payout.bank",
        account: "alpha",
        idempotencyKey: key,
        result: "cancelled",
        code: "job_cancelled",
        attempts: 1,
        enqueuedAt: now,
        finishedAt: now,
        durationMs: 0,
      }),
    ).toBe(true);
    const ended = await until(
      () => status(jobId),
      (r) => r.body?.state === "completed" || r.body?.state === "failed",
    );
    expect(ended.body.state).toBe("completed");
    expect(ended.body.result).toMatchObject({ result: "cancelled" });
    expect(await sentWith(key)).toBe(0);
  });
});

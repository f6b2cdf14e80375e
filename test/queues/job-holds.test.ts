import { describe, expect, it } from "vitest";
import { EventEnvelope } from "../../src/results/event-envelope.js";
import { bankJob } from "../fixtures/batches.js";
import {
  ALPHA_TOKEN,
  jobFinished,
  jobStatus,
  sentWithKey,
  useService,
} from "../helpers/service.js";

const CHECKER_TOKEN = "tok_alpha_checker_0123456789";

// A job enqueued alone over 5,000 NGN waits for a second token's approval.
const h = useService({
  MONEYQ_API_TOKENS: JSON.stringify([
    { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
    { name: "alpha-checker", token: CHECKER_TOKEN, accounts: ["alpha"] },
  ]),
  MONEYQ_APPROVAL_POLICIES: JSON.stringify([{ account: "alpha", jobsOver: { NGN: "5000" } }]),
});

const payout = (key: string, amount: number, extra: Record<string, unknown> = {}) =>
  bankJob({ idempotencyKey: key, ...extra }, { amount });
const enqueue = (body: unknown) => h.api("POST", "/v1/jobs", { token: ALPHA_TOKEN, body });
const status = (jobId: string) => jobStatus(h, jobId);
const finished = (jobId: string) => jobFinished(h, jobId);
const sentWith = (key: string) => sentWithKey(h, key);
const eventsOf = async (jobId: string) =>
  (await h.streamEntries())
    .map(([, f]) => EventEnvelope.parse(JSON.parse(f[f.indexOf("event") + 1] as string)))
    .filter((e) => e.data.jobId === jobId)
    .map((e) => e.type);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a job enqueued alone", () => {
  it("over its account's amount waits for another token's approval, then is sent once", async () => {
    const small = await enqueue(payout("hold-small", 4_000));
    expect(small.status).toBe(202);
    expect((await finished(small.body.jobId)).body.result.result).toBe("succeeded");

    const big = await enqueue(payout("hold-big", 6_000));
    expect(big.status).toBe(202);
    const { jobId } = big.body;
    expect((await status(jobId)).body).toMatchObject({
      state: "awaiting_approval",
      submittedBy: "alpha-ops",
      approval: { state: "pending" },
    });
    await pause(1_000);
    expect(await sentWith("hold-big")).toBe(0);
    const own = await h.api("POST", `/v1/jobs/${jobId}/approve`, { token: ALPHA_TOKEN });
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe("own_job");
    const approved = await h.api("POST", `/v1/jobs/${jobId}/approve`, { token: CHECKER_TOKEN });
    expect(approved.status).toBe(200);
    expect((await finished(jobId)).body).toMatchObject({
      result: { result: "succeeded" },
      approval: { state: "approved", decidedBy: "alpha-checker" },
    });
    expect(await sentWith("hold-big")).toBe(1);
    expect(await eventsOf(jobId)).toEqual(["job.approved", "job.succeeded"]);
  });

  it("rejected, it ends cancelled and is never sent", async () => {
    const { jobId } = (await enqueue(payout("hold-reject", 7_000))).body;
    const rejected = await h.api("POST", `/v1/jobs/${jobId}/reject`, { token: CHECKER_TOKEN });
    expect(rejected.status).toBe(200);
    expect(rejected.body.outcome).toBe("cancelled");
    expect((await status(jobId)).body.result).toMatchObject({
      result: "cancelled",
      code: "job_rejected",
    });
    expect(await eventsOf(jobId)).toEqual(["job.rejected", "job.cancelled"]);
    expect(await sentWith("hold-reject")).toBe(0);
  });

  it("with notBefore is scheduled, not sent before it, then sent; cancelled before, never", async () => {
    const notBefore = new Date(Date.now() + 2_000).toISOString();
    const { jobId } = (await enqueue(payout("sched-1", 100, { notBefore }))).body;
    expect((await status(jobId)).body).toMatchObject({ state: "scheduled", notBefore });
    await pause(1_000);
    expect(await sentWith("sched-1")).toBe(0);
    const done = await finished(jobId);
    expect(done.body.result.result).toBe("succeeded");
    expect(Date.parse(done.body.result.finishedAt)).toBeGreaterThanOrEqual(Date.parse(notBefore));
    expect(await sentWith("sched-1")).toBe(1);

    const later = new Date(Date.now() + 1_500).toISOString();
    const other = (await enqueue(payout("sched-2", 100, { notBefore: later }))).body.jobId;
    const cancelled = await h.api("POST", `/v1/jobs/${other}/cancel`, { token: ALPHA_TOKEN });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.outcome).toBe("cancelled");
    await pause(Date.parse(later) - Date.now() + 1_000);
    expect(await sentWith("sched-2")).toBe(0);
    expect((await status(other)).body.result).toMatchObject({ code: "job_cancelled" });
    const again = await h.api("POST", `/v1/jobs/${other}/cancel`, { token: ALPHA_TOKEN });
    expect(again.status).toBe(404);
  });

  it("refuses a notBefore that is not a time, naming the field", async () => {
    const bad = await enqueue(payout("sched-bad", 100, { notBefore: "soon" }));
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([
      { field: "body.notBefore", rule: "must be an ISO 8601 time with its offset" },
    ]);
  });
});

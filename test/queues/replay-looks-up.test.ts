import { describe, expect, it } from "vitest";
import { bankJob } from "../fixtures/batches.js";
import { jobFinished, until, useService } from "../helpers/service.js";

// One attempt a job. A sandbox that refuses a repeated key (400) instead of replaying it: a
// payout committed and then cut off (its answer lost) cannot be settled by a resend, and ends
// needs_reconciliation; so does one the sandbox answered 5xx every time (it never made it).
const h = useService(
  { MONEYQ_MAX_ATTEMPTS: "1", MONEYQ_RECHECK_AFTER: "off" },
  { rejectRepeatedKeys: true },
);
const FAULTS = "/accounts/acct_alpha/faults";

async function deadLetter(key: string, faults: Record<string, unknown>): Promise<string> {
  await h.sb.control("PUT", FAULTS, { body: faults });
  try {
    const enqueued = await h.api("POST", "/v1/jobs", { body: bankJob({ idempotencyKey: key }) });
    const done = await jobFinished(h, enqueued.body.jobId);
    expect(done.body.result.result).toBe("needs_reconciliation");
    return enqueued.body.jobId;
  } finally {
    await h.sb.control("DELETE", FAULTS);
  }
}

/** The sandbox's POSTs of one idempotency key. */
async function posts(key: string): Promise<number> {
  const log = (await h.sb.control("GET", "/requests")).body.data.requests;
  return log.filter(
    (r: { method: string; idempotencyKey?: string }) =>
      r.method === "POST" && r.idempotencyKey === key,
  ).length;
}

describe("a dead letter's replay asks the provider first", () => {
  it("a payment the provider made: nothing is sent, the job is resolved with the provider's record", async () => {
    const key = "replay-made-1";
    const jobId = await deadLetter(key, { dropAfterCommitRate: 1 });
    const before = await posts(key);
    const replay = await h.api("POST", `/v1/dead-letters/${jobId}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({
      replayed: false,
      resolution: {
        to: "succeeded",
        resolver: { by: "lookup" },
        evidence: { provider: { status: "SUCCESSFUL", foundBy: "reference" } },
      },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(await posts(key)).toBe(before);
    const status = await h.api("GET", `/v1/jobs/${jobId}`);
    expect(status.body.resolution.to).toBe("succeeded");
  });

  it("a payment the provider never saw: replayed, and sent once", async () => {
    const key = "replay-unseen-1";
    const jobId = await deadLetter(key, { errorRate: 1 });
    const before = await posts(key);
    const replay = await h.api("POST", `/v1/dead-letters/${jobId}/replay`);
    expect(replay.status).toBe(202);
    await until(
      () => h.api("GET", `/v1/jobs/${jobId}`),
      (r) => r.body?.result?.result === "succeeded",
    );
    expect((await posts(key)) - before).toBe(1);
  });
});

import { describe, expect, it } from "vitest";
import { ResultsStore } from "../../src/results/results-store.js";
import { bankJob } from "../fixtures/batches.js";
import { BETA_TOKEN, until, useService } from "../helpers/service.js";

// One attempt a job, so a provider error makes a dead letter at once.
const h = useService({ MONEYQ_MAX_ATTEMPTS: "1" });

const job = (reference: string) => bankJob({ batchId: "replays", reference });

const jobStatus = (jobId: string) => h.api("GET", `/v1/jobs/${jobId}`);
const replay = (jobId: string) => h.api("POST", `/v1/dead-letters/${jobId}/replay`);

/** A dead letter of alpha: its one attempt meets a provider error. */
async function deadLetter(reference: string): Promise<{ jobId: string; finishedAt: string }> {
  await h.sb.control("PUT", "/accounts/acct_alpha/faults", { body: { errorRate: 1 } });
  try {
    const { jobId } = (await h.api("POST", "/v1/jobs", { body: job(reference) })).body;
    const dead = await until(
      () => jobStatus(jobId),
      (r) => r.body?.state === "failed" && r.body?.result !== null,
    );
    expect(dead.body.result.result).not.toBe("succeeded");
    return { jobId, finishedAt: dead.body.result.finishedAt };
  } finally {
    await h.sb.control("DELETE", "/accounts/acct_alpha/faults");
  }
}

describe("dead-letter replay is atomic", () => {
  it("of 10 concurrent replays of one job, one is accepted and nine get 409", async () => {
    const { jobId } = await deadLetter("concurrent");
    const answers = await Promise.all(Array.from({ length: 10 }, () => replay(jobId)));
    expect(answers.map((a) => a.status).sort()).toEqual([202, ...Array(9).fill(409)]);
    for (const a of answers.filter((x) => x.status === 409))
      expect(a.body.error.code).toBe("replay_conflict");

    const done = await until(
      () => jobStatus(jobId),
      (r) => r.body?.result?.result === "succeeded",
    );
    // A job that is no longer a dead letter is a conflict too, and its result stays.
    const late = await Promise.all(Array.from({ length: 5 }, () => replay(jobId)));
    expect(late.map((a) => a.status)).toEqual(Array(5).fill(409));
    expect((await jobStatus(jobId)).body.result).toEqual(done.body.result);
  });

  it("a replay never deletes a result recorded after it began", async () => {
    const { jobId, finishedAt } = await deadLetter("stream");
    // Replays keep arriving, 5 at a time, until well after the replayed job's new result.
    const statuses: number[] = [];
    let recordedAt: number | undefined;
    while (recordedAt === undefined || Date.now() - recordedAt < 500) {
      const wave = await Promise.all(Array.from({ length: 5 }, () => replay(jobId)));
      statuses.push(...wave.map((a) => a.status));
      const now = await jobStatus(jobId);
      if (recordedAt === undefined && now.body.result?.result === "succeeded")
        recordedAt = Date.now();
    }
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 202 && s !== 409)).toEqual([]);
    const after = (await jobStatus(jobId)).body;
    expect(after.state).toBe("completed");
    expect(after.result).toMatchObject({ result: "succeeded" });
    expect(after.result.finishedAt > finishedAt).toBe(true);
  });

  it("a replay forgets only the result it read: one recorded since stays", async () => {
    const store = new ResultsStore(h.redis(), {
      prefix: `${h.config().redisPrefix}:forget`,
      retentionMs: 60_000,
      maxLen: 100,
    });
    const result = (finishedAt: string) => ({
      jobId: "j_forget",
      kind: "payout.bank" as const,
      account: "alpha",
      idempotencyKey: "k-forget",
      result: "failed" as const,
      code: "upstream_failed" as const,
      message: "no",
      attempts: 1,
      enqueuedAt: "2026-11-22T00:00:00.000Z",
      finishedAt,
      durationMs: 1,
    });
    expect(await store.emit(result("2026-11-22T00:00:01.000Z"))).toBe(true);
    const read = (await store.recorded("alpha", "j_forget")) as string;
    expect(await store.forget("alpha", "j_forget", read)).toBe(true);
    expect(await store.emit(result("2026-11-22T00:00:02.000Z"))).toBe(true);
    // A second replay that read the first result before the new one was recorded.
    expect(await store.forget("alpha", "j_forget", read)).toBe(false);
    expect((await store.get("alpha", "j_forget"))?.finishedAt).toBe("2026-11-22T00:00:02.000Z");
  });

  it("a job that was never a dead letter, or is another account's, is 404 and untouched", async () => {
    expect((await replay(`j_${"0".repeat(40)}`)).status).toBe(404);
    const { jobId } = await deadLetter("theirs");
    const before = (await jobStatus(jobId)).body;
    const other = await h.api("POST", `/v1/dead-letters/${jobId}/replay`, { token: BETA_TOKEN });
    expect(other.status).toBe(404);
    expect((await jobStatus(jobId)).body).toEqual(before);
  });
});

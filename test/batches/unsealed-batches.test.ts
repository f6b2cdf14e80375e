import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { csvRows } from "../../src/batches/batch-rows.js";
import { Batches } from "../../src/batches/batches.js";
import { batchKeys } from "../../src/redis/keys.js";
import { EventEnvelope } from "../../src/results/event-envelope.js";
import { JobResult } from "../../src/results/job-result.js";
import { gate, hookedProducer } from "../helpers/hooks.js";
import { ALPHA_TOKEN, bankCsv, batchFinished, until, useService } from "../helpers/service.js";

/**
 * A batch is accepted whole or not at all: until its submission seals it, the rate gate holds
 * its jobs; a submission that stops leaves it `submission_failed` until it is resumed, or
 * cancelled once its lease has run out. The service runs its workers meanwhile.
 */
const h = useService();

/** Batches over the service's Redis, whose enqueue of each chunk of rows first runs `hook`. */
function hookedBatches(hook: (call: number) => Promise<void>, submitLeaseMs?: number): Batches {
  return new Batches({
    connection: h.redis(),
    prefix: h.config().redisPrefix,
    producer: hookedProducer(h.service().producer, (call) => hook(call)),
    results: h.service().results,
    ...(submitLeaseMs !== undefined && { submitLeaseMs }),
  });
}

function submit(batches: Batches, batchId: string, rows: number) {
  return batches.submit({
    account: "alpha",
    kind: "payout.bank",
    batchId,
    source: csvRows(Readable.from([bankCsv(batchId, rows)]), "payout.bank"),
  });
}

/** How many requests reached the sandbox under each key of the batch's report. */
async function sentPerKey(batchId: string): Promise<number[]> {
  const report = await h.api("GET", `/v1/batches/${batchId}/results?format=jsonl`);
  const keys = report.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).idempotencyKey as string);
  const { requests } = (await h.sb.control("GET", "/requests")).body.data;
  return keys.map(
    (key) => requests.filter((r: { idempotencyKey?: string }) => r.idempotencyKey === key).length,
  );
}

/** The stream's events and results of one batch. */
async function streamOf(batchId: string) {
  const events = (await h.streamEntries())
    .map(([, fields]) =>
      EventEnvelope.parse(JSON.parse(fields[fields.indexOf("event") + 1] as string)),
    )
    .filter((e) => e.data.batchId === batchId);
  return {
    batchEvents: events.filter((e) => e.type.startsWith("batch.")).map((e) => e.type),
    results: events.filter((e) => e.type.startsWith("job.")).map((e) => JobResult.parse(e.data)),
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("an unsealed batch", () => {
  it("sends nothing while its submission runs; sealed, every row runs at once", async () => {
    const second = gate();
    const batches = hookedBatches(async (call) => {
      if (call === 2) await second.wait();
    });
    const submitting = submit(batches, "seal-held", 150);
    await second.entered;
    // The first chunk's 100 jobs are in the queue, and the workers meet them.
    await pause(1_000);
    expect((await sentPerKey("seal-held")).filter((n) => n > 0)).toEqual([]);
    const validating = await h.api("GET", "/v1/batches/seal-held");
    expect(validating.body.state).toBe("validating");
    const heldKey = batchKeys(h.space(), "alpha", "seal-held").held;
    const held = await h.redis().scard(heldKey);
    expect(held).toBeGreaterThan(0);
    second.release();
    expect((await submitting).created).toBe(true);
    const done = await batchFinished(h, ALPHA_TOKEN, "seal-held");
    expect(done.body).toMatchObject({ state: "completed", counts: { succeeded: 150 } });
    // The held jobs were released by the seal, not by their hold running out at resumeBy.
    expect(Date.parse(done.body.finishedAt)).toBeLessThan(Date.parse(validating.body.resumeBy));
    expect(await sentPerKey("seal-held")).toEqual(Array(150).fill(1));
    expect(await h.redis().exists(heldKey)).toBe(0);
  });

  it("whose submission failed says so, and the same file resumes and seals it", async () => {
    const failing = hookedBatches(async (call) => {
      if (call === 2) throw new Error("the submission stops here");
    });
    await expect(submit(failing, "seal-resume", 150)).rejects.toThrow("stops here");
    const failed = await h.api("GET", "/v1/batches/seal-resume");
    // The first chunk's jobs exist; the second chunk's report lines were written, not its jobs.
    expect(failed.body).toMatchObject({ state: "submission_failed", rows: 150, accepted: 100 });
    const listed = await h.api("GET", "/v1/batches?account=alpha&state=submission_failed");
    expect(listed.body.batches.map((b: { batchId: string }) => b.batchId)).toContain("seal-resume");
    await pause(1_000);
    const report = await h.api("GET", "/v1/batches/seal-resume/results?format=jsonl");
    expect(report.status).toBe(200);
    expect((await sentPerKey("seal-resume")).filter((n) => n > 0)).toEqual([]);

    const resumed = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=seal-resume", {
      csv: bankCsv("seal-resume", 150),
    });
    expect(resumed.status).toBe(202);
    const done = await batchFinished(h, ALPHA_TOKEN, "seal-resume");
    expect(done.body).toMatchObject({ state: "completed", accepted: 150 });
    expect(await sentPerKey("seal-resume")).toEqual(Array(150).fill(1));
    expect((await streamOf("seal-resume")).results).toHaveLength(150);
  });

  it("left unsealed past its lease is cancelled: one cancelled result per enqueued row", async () => {
    const leaseMs = 600;
    const batches = hookedBatches(async (call) => {
      if (call === 2) throw new Error("the submission stops here");
    }, leaseMs);
    await expect(submit(batches, "seal-abandon", 150)).rejects.toThrow("stops here");
    // Within its lease nothing is cancelled; then one sweep (of any process) cancels it.
    expect(await batches.sweepUnsealed(["alpha"])).toBe(0);
    await pause(leaseMs + 200);
    // The service's own sweep (every 5 s) may have come first: one of them cancels it, once
    // (one batch.cancelled event, below).
    expect(await batches.sweepUnsealed(["alpha"])).toBeLessThanOrEqual(1);
    const done = await until(
      () => h.api("GET", "/v1/batches/seal-abandon"),
      (s) => s.body.finishedAt !== undefined,
    );
    expect(done.body).toMatchObject({
      state: "cancelled",
      cancelReason: "submission_abandoned",
      accepted: 100,
      finished: 100,
      counts: { cancelled: 100 },
      totals: { NGN: { requested: { rows: 100 }, pending: { rows: 0 }, cancelled: { rows: 100 } } },
    });
    const stream = await streamOf("seal-abandon");
    expect(stream.batchEvents).toEqual(["batch.cancelled"]);
    expect(stream.results).toHaveLength(100);
    expect(new Set(stream.results.map((r) => r.jobId)).size).toBe(100);
    for (const r of stream.results)
      expect(r).toMatchObject({ result: "cancelled", code: "submission_abandoned" });
    // The report holds the enqueued rows only, each cancelled; nothing was sent.
    const lines = (await h.api("GET", "/v1/batches/seal-abandon/results?format=jsonl")).text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.result)).toEqual(Array(100).fill("cancelled"));
    await pause(500);
    expect(await sentPerKey("seal-abandon")).toEqual(Array(100).fill(0));
    // Another sweep finds nothing more to do; the same file again finds the cancelled batch.
    expect(await batches.sweepUnsealed(["alpha"])).toBe(0);
    const again = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=seal-abandon", {
      csv: bankCsv("seal-abandon", 150),
    });
    expect(again.body).toMatchObject({ created: false, status: { state: "cancelled" } });
  });

  it("cancelled after its submission failed: every enqueued row cancelled at once", async () => {
    const failing = hookedBatches(async (call) => {
      if (call === 2) throw new Error("the submission stops here");
    });
    await expect(submit(failing, "seal-cancel", 150)).rejects.toThrow("stops here");
    const cancelled = await h.api("POST", "/v1/batches/seal-cancel/cancel");
    expect(cancelled.status).toBe(200);
    // Every enqueued row is in the report: a row whose held job a worker's gate ended after
    // the cancel (cancelled too) counts as finished.
    const { cancelled: removed, inFlight, finished } = cancelled.body;
    expect(removed + inFlight + finished).toBe(100);
    const done = await until(
      () => h.api("GET", "/v1/batches/seal-cancel"),
      (s) => s.body.finishedAt !== undefined,
    );
    expect(done.body).toMatchObject({
      state: "cancelled",
      cancelReason: "cancelled",
      accepted: 100,
      counts: { cancelled: 100 },
    });
    for (const r of (await streamOf("seal-cancel")).results)
      expect(r).toMatchObject({ result: "cancelled", code: "batch_cancelled" });
    expect(await sentPerKey("seal-cancel")).toEqual(Array(100).fill(0));
  });
});

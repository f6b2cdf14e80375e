import { describe, expect, it } from "vitest";
import { IdempotencyKeyReusedError } from "../../src/queues/enqueue-error.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { bankJob, useLoggedService } from "../helpers/logged-service.js";
import { until } from "../helpers/service.js";

const h = useLoggedService();

/** Idempotency keys with a ledger effect at the sandbox for alpha. */
async function effects(): Promise<string[]> {
  const entries = (await h.sb.control("GET", "/ledger", { query: { accountId: "acct_alpha" } }))
    .body.data.entries as { idempotencyKey: string | null }[];
  return [...new Set(entries.flatMap((e) => (e.idempotencyKey ? [e.idempotencyKey] : [])))];
}

const csv = (amounts: readonly number[]) =>
  [
    "reference,amount,currency,bankCode,accountNumber,accountName,bankName",
    ...amounts.map((a, i) => `reuse-${i + 1},${a},NGN,044,0123456789,Ada Obi,Access Bank`),
  ].join("\n");

describe("one key, one request", () => {
  it("POST /v1/jobs: same key and request replays (200), another request is 409 naming the job", async () => {
    const first = await h.api("POST", "/v1/jobs", { body: bankJob({ idempotencyKey: "pay-7" }) });
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await h.api("POST", "/v1/jobs", { body: bankJob({ idempotencyKey: "pay-7" }) });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const other = await h.api("POST", "/v1/jobs", {
      body: bankJob({ idempotencyKey: "pay-7" }, { amount: 9000 }),
    });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: "idempotency_key_reused",
      jobId: first.body.jobId,
      details: [{ field: "idempotencyKey", rule: `already used by job ${first.body.jobId}` }],
    });
    // Other metadata is another request too.
    const meta = await h.api("POST", "/v1/jobs", {
      body: bankJob({ idempotencyKey: "pay-7", metadata: { invoice: "B" } }),
    });
    expect(meta.status).toBe(409);
    await until(
      () => h.api("GET", `/v1/jobs/${first.body.jobId}`),
      (r) => r.body?.result?.result === "succeeded",
    );
    expect((await effects()).filter((k) => k === "pay-7")).toHaveLength(1);
  });

  it("takes the key from the Idempotency-Key header, the same key as in the body", async () => {
    const byHeader = await h.api("POST", "/v1/jobs", {
      body: bankJob(),
      headers: { "idempotency-key": "hdr-1" },
    });
    expect(byHeader.status).toBe(202);
    expect(byHeader.body.idempotencyKey).toBe("hdr-1");
    const byBody = await h.api("POST", "/v1/jobs", { body: bankJob({ idempotencyKey: "hdr-1" }) });
    expect(byBody.status).toBe(200);
    expect(byBody.headers.get("idempotent-replayed")).toBe("true");
    const clash = await h.api("POST", "/v1/jobs", {
      body: bankJob({ idempotencyKey: "hdr-2" }),
      headers: { "idempotency-key": "hdr-1" },
    });
    expect(clash.status).toBe(400);
    expect(clash.body.error.details[0].field).toBe("headers.idempotency-key");
  });

  it("a 409 names the key where it came from; of two concurrent requests with one key, one is 202, one 409", async () => {
    await h.api("POST", "/v1/jobs", { body: bankJob(), headers: { "idempotency-key": "hdr-9" } });
    const clash = await h.api("POST", "/v1/jobs", {
      body: bankJob({}, { amount: 151 }),
      headers: { "idempotency-key": "hdr-9" },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.error.details[0].field).toBe("headers.idempotency-key");

    const answers = await Promise.all([
      h.api("POST", "/v1/jobs", { body: bankJob({ idempotencyKey: "race-1" }, { amount: 100 }) }),
      h.api("POST", "/v1/jobs", { body: bankJob({ idempotencyKey: "race-1" }, { amount: 200 }) }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
  });

  it("Producer.enqueue refuses another request under a used key", async () => {
    const producer = h.service().producer;
    const job = {
      ...(bankJob() as unknown as JobInput),
      account: "alpha",
      idempotencyKey: "lib-1",
    };
    const first = await producer.enqueue(job);
    // The same job again (the repeats a first enqueue may name are said once, at first).
    const { repeats: _named, ...firstJob } = first;
    expect(await producer.enqueue(job)).toEqual(firstJob);
    const changed = { ...job, request: bankJob({}, { amount: 151 }).request } as JobInput;
    await expect(producer.enqueue(changed)).rejects.toSatisfy(
      (e) => e instanceof IdempotencyKeyReusedError && e.jobId === first.jobId,
    );
    // Two requests under one key in one call: the second is refused and nothing is enqueued.
    const twin = { ...job, idempotencyKey: "lib-twin" };
    await expect(
      producer.enqueueMany([twin, { ...twin, request: changed.request } as JobInput]),
    ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    const status = await h.api("GET", "/v1/jobs?idempotencyKey=lib-twin");
    expect(status.status).toBe(404);
  });

  it("a batch sent again under its id with a changed row is 409 naming the job; the same file replays", async () => {
    const first = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=payroll-11", {
      type: "text/csv",
      body: csv([100, 200]),
    });
    expect(first.status).toBe(202);
    const same = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=payroll-11", {
      type: "text/csv",
      body: csv([100, 200]),
    });
    expect(same.status).toBe(200);
    expect(same.body.created).toBe(false);
    const changed = await h.api("POST", "/v1/batches?kind=payout.bank&batchId=payroll-11", {
      type: "text/csv",
      body: csv([100, 999]),
    });
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe("idempotency_key_reused");
    expect(changed.body.error.rows).toEqual([
      expect.objectContaining({
        row: 2,
        reference: "reuse-2",
        column: "reference",
        rule: expect.stringMatching(
          /^idempotency_key_reused: job j_[0-9a-f]{40} holds a different request/,
        ),
      }),
    ]);
    const done = await until(
      () => h.api("GET", "/v1/batches/payroll-11"),
      (r) => r.body?.finishedAt !== undefined,
    );
    expect(done.body.counts.succeeded).toBe(2);
    const report = await h.api("GET", "/v1/batches/payroll-11/results?format=jsonl");
    const lines = report.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { result: string }) => l.result)).toEqual(["succeeded", "succeeded"]);
  });
});

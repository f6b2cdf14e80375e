import { describe, expect, it } from "vitest";
import { BatchStore } from "../../src/batches/batch-store.js";
import { EventEnvelope } from "../../src/results/event-envelope.js";
import { JobResult } from "../../src/results/job-result.js";
import { ALPHA_TOKEN, BETA_TOKEN, bankCsv, batchFinished, useService } from "../helpers/service.js";

const CHECKER_TOKEN = "tok_alpha_checker_0123456789";
const CLERK_TOKEN = "tok_alpha_clerk_01234567890";
const BETA_CHECKER_TOKEN = "tok_beta_checker_01234567890";

// alpha: a batch over 1,000 NGN waits for approval; beta: every batch does, for 1.5 s at most.
const h = useService({
  MONEYQ_API_TOKENS: JSON.stringify([
    { name: "alpha-ops", token: ALPHA_TOKEN, accounts: ["alpha"] },
    { name: "alpha-checker", token: CHECKER_TOKEN, accounts: ["alpha"] },
    {
      name: "alpha-clerk",
      token: CLERK_TOKEN,
      accounts: ["alpha"],
      permissions: ["submit", "read", "operate"],
    },
    { name: "beta-ops", token: BETA_TOKEN, accounts: ["beta"] },
    { name: "beta-checker", token: BETA_CHECKER_TOKEN, accounts: ["beta"] },
  ]),
  MONEYQ_APPROVAL_POLICIES: JSON.stringify([
    { account: "alpha", batchesOver: { NGN: "1000" } },
    { account: "beta", batches: "all", expiresAfterMs: 1500 },
  ]),
});

const submit = (token: string, batchId: string, csv: string, query = "") =>
  h.api("POST", `/v1/batches?kind=payout.bank&batchId=${batchId}${query}`, { token, csv });
const status = (token: string, batchId: string) =>
  h.api("GET", `/v1/batches/${batchId}`, { token });
const finished = (token: string, batchId: string) => batchFinished(h, token, batchId);

/** The idempotency keys of a batch's rows, from its report. */
async function keysOf(token: string, batchId: string): Promise<string[]> {
  const report = await h.api("GET", `/v1/batches/${batchId}/results?format=jsonl`, { token });
  return report.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).idempotencyKey as string);
}

/** How many requests reached the sandbox under each of `keys`. */
async function sentWith(keys: readonly string[]): Promise<number[]> {
  const { requests } = (await h.sb.control("GET", "/requests")).body.data;
  return keys.map(
    (key) => requests.filter((r: { idempotencyKey?: string }) => r.idempotencyKey === key).length,
  );
}

/** The stream's entries about one batch: its events, and its jobs' results. */
async function streamOf(batchId: string) {
  const entries = await h.streamEntries();
  const events = entries
    .map(([, fields]) =>
      EventEnvelope.parse(JSON.parse(fields[fields.indexOf("event") + 1] as string)),
    )
    .filter((e) => e.data.batchId === batchId);
  return {
    batchEvents: events.filter((e) => e.type.startsWith("batch.")).map((e) => e.type),
    results: events.filter((e) => e.type.startsWith("job.")).map((e) => JobResult.parse(e.data)),
    all: events,
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("maker-checker approval", () => {
  it("a batch over the threshold sends nothing until another token approves it", async () => {
    const csv = bankCsv("appr", 12);
    const submitted = await submit(ALPHA_TOKEN, "payroll-approve", csv);
    expect(submitted.status).toBe(202);
    const waiting = await status(CHECKER_TOKEN, "payroll-approve");
    expect(waiting.body).toMatchObject({
      state: "awaiting_approval",
      submittedBy: "alpha-ops",
      approval: { state: "pending" },
      rows: 12,
      totals: { NGN: { requested: { rows: 12, amount: "1278" }, pending: { rows: 12 } } },
    });
    const keys = await keysOf(ALPHA_TOKEN, "payroll-approve");
    await pause(1_000);
    expect(await sentWith(keys)).toEqual(keys.map(() => 0));

    const clerk = await h.api("POST", "/v1/batches/payroll-approve/approve", {
      token: CLERK_TOKEN,
    });
    expect(clerk.status).toBe(403);
    expect(clerk.body.error.code).toBe("forbidden");
    expect(clerk.body.error.message).toContain('"approve" permission');
    const own = await h.api("POST", "/v1/batches/payroll-approve/approve", { token: ALPHA_TOKEN });
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe("own_batch");
    expect(await sentWith(keys)).toEqual(keys.map(() => 0));

    const approved = await h.api("POST", "/v1/batches/payroll-approve/approve", {
      token: CHECKER_TOKEN,
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      jobs: 12,
      status: { approval: { state: "approved", decidedBy: "alpha-checker" } },
    });
    const done = await finished(ALPHA_TOKEN, "payroll-approve");
    expect(done.body).toMatchObject({ state: "completed", counts: { succeeded: 12 } });
    expect(await sentWith(keys)).toEqual(keys.map(() => 1));

    const again = await h.api("POST", "/v1/batches/payroll-approve/approve", {
      token: CHECKER_TOKEN,
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("not_awaiting_approval");
    const stream = await streamOf("payroll-approve");
    expect(stream.batchEvents).toEqual([
      "batch.awaiting_approval",
      "batch.approved",
      "batch.started",
      "batch.completed",
    ]);
    expect(stream.results).toHaveLength(12);
    const approvedEvent = stream.all.find((e) => e.type === "batch.approved");
    expect(approvedEvent?.data).toMatchObject({ approvedBy: "alpha-checker", state: "queued" });
  });

  it("approving an approved batch again releases jobs a cut-short release left held", async () => {
    expect((await submit(ALPHA_TOKEN, "payroll-resume", bankCsv("resume", 12))).status).toBe(202);
    const keys = await keysOf(ALPHA_TOKEN, "payroll-resume");
    // The decision is recorded, then the approving process stops before it releases any job.
    const store = new BatchStore(h.redis(), h.config().redisPrefix, h.service().results);
    expect(await store.decide("alpha", "payroll-resume", "approve", "alpha-checker")).toBe(
      "queued",
    );
    await pause(1_000);
    expect(await sentWith(keys)).toEqual(keys.map(() => 0));
    const again = await h.api("POST", "/v1/batches/payroll-resume/approve", {
      token: CHECKER_TOKEN,
    });
    expect(again.status).toBe(200);
    expect(again.body.jobs).toBe(12);
    expect((await finished(ALPHA_TOKEN, "payroll-resume")).body.state).toBe("completed");
    expect(await sentWith(keys)).toEqual(keys.map(() => 1));
    expect(
      (await streamOf("payroll-resume")).batchEvents.filter((e) => e === "batch.approved"),
    ).toHaveLength(1);
  });

  it("approving a running batch again changes nothing: jobs 0, every lookup at its time", async () => {
    // Three payouts the provider keeps PENDING: each is looked up 200 ms after its submission,
    // then 400 ms after that (MONEYQ_CONFIRM_FIRST_DELAY_MS, doubling), waiting in between in
    // BullMQ's delayed set, where a second release would pull it forward.
    const csv = bankCsv("again", 3, (_, cells) => {
      cells.amount = "500";
      cells.accountNumber = "0000000002";
    });
    const before = await h.sb.control("GET", "/requests");
    const afterSeq = before.body.data.requests.at(-1)?.seq ?? 0;
    expect((await submit(ALPHA_TOKEN, "payroll-again", csv)).status).toBe(202);
    const approve = () =>
      h.api("POST", "/v1/batches/payroll-again/approve", { token: CHECKER_TOKEN });
    const first = await approve();
    expect(first.status).toBe(200);
    expect(first.body.jobs).toBe(3);
    const repeats: { status: number; jobs: number }[] = [];
    for (let i = 0; i < 10; i += 1) {
      await pause(40);
      const again = await approve();
      repeats.push({ status: again.status, jobs: again.body.jobs });
    }
    expect(repeats).toEqual(repeats.map(() => ({ status: 200, jobs: 0 })));
    await pause(1_000);
    const requests = (
      await h.sb.control("GET", "/requests", { query: { accountId: "acct_alpha", afterSeq } })
    ).body.data.requests as { at: number; method: string; path: string }[];
    const submissions = requests.filter((r) => r.method === "POST");
    expect(submissions).toHaveLength(3);
    const lookups = new Map<string, number[]>();
    for (const r of requests.filter((q) => q.method === "GET"))
      lookups.set(r.path, [...(lookups.get(r.path) ?? []), r.at]);
    expect(lookups.size).toBe(3);
    // Every job's first lookup comes no earlier than 200 ms (less 50 ms of timer slack) after
    // its submission, and its second no earlier than 400 ms after its first. The sandbox does
    // not say which lookup is whose: if each holds, so does the k-th first lookup against the
    // k-th submission, both in time order.
    const sent = submissions.map((r) => r.at).sort((a, b) => a - b);
    const firsts = [...lookups.values()].map((times) => times[0] as number).sort((a, b) => a - b);
    for (const [k, at] of firsts.entries())
      expect(at - (sent[k] as number), `first lookup ${k + 1}`).toBeGreaterThanOrEqual(150);
    for (const [path, times] of lookups)
      for (const [i, at] of times.entries())
        if (i > 0) expect(at - (times[i - 1] as number), path).toBeGreaterThanOrEqual(350);
    expect([...lookups.values()].every((times) => times.length >= 2)).toBe(true);
  });

  it("a batch under the threshold runs at once", async () => {
    const submitted = await submit(ALPHA_TOKEN, "payroll-small", bankCsv("small", 3));
    expect(submitted.status).toBe(202);
    const done = await finished(ALPHA_TOKEN, "payroll-small");
    expect(done.body.state).toBe("completed");
    expect(done.body.approval).toBeUndefined();
    expect((await streamOf("payroll-small")).batchEvents).toEqual([
      "batch.started",
      "batch.completed",
    ]);
  });

  it("rejection cancels every row with one result each, and sends nothing", async () => {
    const submitted = await submit(ALPHA_TOKEN, "payroll-reject", bankCsv("rej", 15));
    expect(submitted.status).toBe(202);
    const keys = await keysOf(ALPHA_TOKEN, "payroll-reject");
    const rejected = await h.api("POST", "/v1/batches/payroll-reject/reject", {
      token: CHECKER_TOKEN,
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ jobs: 15 });
    const done = await finished(ALPHA_TOKEN, "payroll-reject");
    expect(done.body).toMatchObject({
      state: "cancelled",
      cancelReason: "rejected",
      counts: { cancelled: 15 },
      approval: { state: "rejected", decidedBy: "alpha-checker" },
    });
    const stream = await streamOf("payroll-reject");
    expect(stream.batchEvents).toEqual(["batch.awaiting_approval", "batch.rejected"]);
    expect(stream.results).toHaveLength(15);
    expect(new Set(stream.results.map((r) => r.jobId)).size).toBe(15);
    for (const r of stream.results)
      expect(r).toMatchObject({ result: "cancelled", code: "batch_rejected" });
    await pause(500);
    expect(await sentWith(keys)).toEqual(keys.map(() => 0));
  });

  it("an approval not given in time cancels the batch; nothing is sent", async () => {
    const submitted = await submit(BETA_TOKEN, "payroll-expire", bankCsv("exp", 4));
    expect(submitted.status).toBe(202);
    expect((await status(BETA_TOKEN, "payroll-expire")).body.approval.expiresAt).toBeDefined();
    const keys = await keysOf(BETA_TOKEN, "payroll-expire");
    const done = await finished(BETA_TOKEN, "payroll-expire");
    expect(done.body).toMatchObject({
      state: "cancelled",
      cancelReason: "approval_expired",
      counts: { cancelled: 4 },
      approval: { state: "expired" },
    });
    const late = await h.api("POST", "/v1/batches/payroll-expire/approve", {
      token: BETA_CHECKER_TOKEN,
    });
    expect(late.status).toBe(409);
    const stream = await streamOf("payroll-expire");
    expect(stream.batchEvents).toEqual(["batch.awaiting_approval", "batch.cancelled"]);
    for (const r of stream.results)
      expect(r).toMatchObject({ result: "cancelled", code: "approval_expired" });
    expect(await sentWith(keys)).toEqual(keys.map(() => 0));
  });
});

describe("scheduled batches", () => {
  it("a batch with notBefore sends nothing before it, then runs", async () => {
    const notBefore = new Date(Date.now() + 2_500).toISOString();
    const submitted = await submit(
      ALPHA_TOKEN,
      "payroll-later",
      bankCsv("later", 4),
      `&notBefore=${encodeURIComponent(notBefore)}`,
    );
    expect(submitted.status).toBe(202);
    expect((await status(ALPHA_TOKEN, "payroll-later")).body).toMatchObject({
      state: "scheduled",
      notBefore,
    });
    const keys = await keysOf(ALPHA_TOKEN, "payroll-later");
    await pause(1_500);
    expect(await sentWith(keys)).toEqual(keys.map(() => 0));
    const done = await finished(ALPHA_TOKEN, "payroll-later");
    expect(done.body).toMatchObject({ state: "completed", counts: { succeeded: 4 } });
    expect(Date.parse(done.body.startedAt)).toBeGreaterThanOrEqual(Date.parse(notBefore));
    expect(await sentWith(keys)).toEqual(keys.map(() => 1));
  });

  it("cancelled before its time, it sends nothing", async () => {
    const notBefore = new Date(Date.now() + 2_000).toISOString();
    await submit(
      ALPHA_TOKEN,
      "payroll-never",
      bankCsv("never", 4),
      `&notBefore=${encodeURIComponent(notBefore)}`,
    );
    const keys = await keysOf(ALPHA_TOKEN, "payroll-never");
    const cancelled = await h.api("POST", "/v1/batches/payroll-never/cancel", {
      token: ALPHA_TOKEN,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ cancelled: 4 });
    await pause(Date.parse(notBefore) - Date.now() + 1_000);
    expect(await sentWith(keys)).toEqual(keys.map(() => 0));
    expect((await streamOf("payroll-never")).batchEvents).toEqual(["batch.cancelled"]);
  });

  it("refuses a notBefore that is not a time, naming the field", async () => {
    const bad = await submit(
      ALPHA_TOKEN,
      "payroll-bad-time",
      bankCsv("badtime", 1),
      "&notBefore=tomorrow",
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe("query.notBefore");
    const far = new Date(Date.now() + 400 * 86_400_000).toISOString();
    const tooFar = await submit(ALPHA_TOKEN, "payroll-far", bankCsv("far", 1), `&notBefore=${far}`);
    expect(tooFar.status).toBe(400);
    expect(tooFar.body.error.details[0]).toEqual({
      field: "notBefore",
      rule: "at most 366 days ahead",
    });
  });
});

describe("per-currency totals", () => {
  it("equal the sums of the rows' results, with mixed currencies and failures", async () => {
    const rows: Record<string, string>[] = [
      { amount: "100.50", currency: "NGN" },
      { amount: "200.25", currency: "NGN" },
      { amount: "666.66", currency: "NGN" },
      { amount: "300", currency: "KES" },
      { amount: "12.05", currency: "KES", accountNumber: "0000000001" },
      { amount: "50.5", currency: "GHS" },
    ];
    const csv = bankCsv("totals", rows.length, (n, cells) => Object.assign(cells, rows[n - 1]));
    expect((await submit(ALPHA_TOKEN, "payroll-totals", csv)).status).toBe(202);
    const done = await finished(ALPHA_TOKEN, "payroll-totals");
    const report = await h.api("GET", "/v1/batches/payroll-totals/results?format=jsonl", {
      token: ALPHA_TOKEN,
    });
    const lines = report.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    // Sums in hundredths, from the report's own lines.
    const expected: Record<string, Record<string, { rows: number; cents: number }>> = {};
    for (const line of lines) {
      const bucket = line.result === "rejected" ? "failed" : line.result;
      for (const b of ["requested", bucket]) {
        const byCurrency = expected[line.currency] ?? {};
        const entry = byCurrency[b] ?? { rows: 0, cents: 0 };
        byCurrency[b] = {
          rows: entry.rows + 1,
          cents: entry.cents + Math.round(Number(line.amount) * 100),
        };
        expected[line.currency] = byCurrency;
      }
    }
    expect(Object.keys(done.body.totals).sort()).toEqual(["GHS", "KES", "NGN"]);
    expect(done.body.counts).toMatchObject({ succeeded: 4, failed: 2 });
    for (const [currency, buckets] of Object.entries(done.body.totals) as [
      string,
      Record<string, { rows: number; amount: string }>,
    ][]) {
      for (const [bucket, total] of Object.entries(buckets)) {
        const want = expected[currency]?.[bucket] ?? { rows: 0, cents: 0 };
        expect({
          currency,
          bucket,
          rows: total.rows,
          cents: Math.round(Number(total.amount) * 100),
        }).toEqual({
          currency,
          bucket,
          rows: want.rows,
          cents: want.cents,
        });
      }
    }
    expect(done.body.totals.NGN.failed).toEqual({ rows: 1, amount: "666.66" });
    expect(done.body.totals.KES.pending).toEqual({ rows: 0, amount: "0.00" });
    const completed = (await streamOf("payroll-totals")).all.find(
      (e) => e.type === "batch.completed_with_failures",
    );
    expect(completed?.data.totals).toEqual(done.body.totals);
  });
});

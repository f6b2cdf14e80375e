import { describe, expect, it } from "vitest";
import {
  ALPHA_TOKEN,
  bankCsv,
  batchFinished,
  jobStatus,
  until,
  useService,
} from "../helpers/service.js";

// 500 payouts, 15 of which the sandbox reverses after their success: 10 with a reversing
// transaction (account number 0000000003: `reversedBy` on the original), 5 returned as a change
// of their own status (0000000005: REVERSED, a provider's dialect); each payout is looked up
// again after its success, at 2 s and 3 s.
const h = useService({ MONEYQ_RECHECK_AFTER: "2s,3s", MONEYQ_RATE_LIMIT_PER_SECOND: "400" });
const ROWS = 500;
const BY_TRANSACTION = new Set([4, 11, 17, 60, 99, 150, 230, 301, 402, 499]);
const BY_STATUS = new Set([8, 77, 188, 260, 444]);
const REVERSED_ROWS = new Set([...BY_TRANSACTION, ...BY_STATUS]);

/** The sandbox's requests of one kind since `afterSeq`. */
async function requests(afterSeq: number) {
  const all = (await h.sb.control("GET", "/requests", { query: { accountId: "acct_alpha" } })).body
    .data.requests as { seq: number; at: number; method: string; path: string }[];
  return all.filter((r) => r.seq > afterSeq);
}

const reversedEvents = async () =>
  (await h.streamEntries())
    .map(([, fields]) => JSON.parse(fields[fields.indexOf("event") + 1] as string))
    .filter((e) => e.type === "job.reversed");

describe("after success, moneyq keeps watching", () => {
  it("records each reversal once, moves its money in the batch's totals, and sends only the scheduled lookups", async () => {
    const startSeq = Math.max(-1, ...(await requests(-1)).map((r) => r.seq));
    const csv = bankCsv("recheck", ROWS, (n, cells) => {
      if (BY_TRANSACTION.has(n)) cells.accountNumber = "0000000003";
      if (BY_STATUS.has(n)) cells.accountNumber = "0000000005";
    });
    const submitted = await h.api("POST", "/v1/batches?kind=payout.bank", { csv });
    expect(submitted.status).toBe(202);
    const { batchId } = submitted.body;
    const done = await batchFinished(h, ALPHA_TOKEN, batchId);
    expect(done.body.counts.succeeded).toBe(ROWS);
    const report = await h.api("GET", `/v1/batches/${batchId}/results?format=jsonl`);
    const lines = report.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));

    // A payout's re-checks are the lookups of its transaction after its result: two, or one for
    // a reversed payout (its re-checks end there; one whose success already showed the reversal
    // is looked up at once). Wait for all, then a while for any beyond them.
    const RECHECKS = 2 * ROWS - REVERSED_ROWS.size;
    const finishedAt = new Map<string, number>();
    for (const line of lines) {
      const job = await h.api("GET", `/v1/jobs?idempotencyKey=${line.idempotencyKey}`);
      finishedAt.set(line.upstreamId, Date.parse(job.body.result.finishedAt));
    }
    const rechecks = async () =>
      (await requests(startSeq)).filter((r) => {
        const id = r.path.split("/").at(-1) as string;
        // A confirmation can share its result's millisecond; a re-check is seconds later.
        return r.method === "GET" && r.at > (finishedAt.get(id) ?? Number.POSITIVE_INFINITY);
      });
    await until(rechecks, (sent) => sent.length >= RECHECKS, 60_000);
    await new Promise((r) => setTimeout(r, 1_500));
    const perPayout = new Map<string, number>();
    for (const r of await rechecks()) perPayout.set(r.path, (perPayout.get(r.path) ?? 0) + 1);
    for (const line of lines)
      expect([line.row, perPayout.get(`/v1/transactions/${line.upstreamId}`)]).toEqual([
        line.row,
        REVERSED_ROWS.has(line.row) ? 1 : 2,
      ]);
    // Nothing else was sent: the submissions, one confirmation each (the sandbox answers
    // PENDING), the re-checks.
    const sent = await requests(startSeq);
    expect(sent.filter((r) => r.method === "POST")).toHaveLength(ROWS);
    expect(sent).toHaveLength(ROWS + ROWS + RECHECKS);

    const events = await reversedEvents();
    expect(events.map((e) => e.data.row).sort((a, b) => a - b)).toEqual(
      [...REVERSED_ROWS].sort((a, b) => a - b),
    );
    for (const event of events) {
      expect(event.data).toMatchObject({ result: "succeeded", batchId });
      if (BY_TRANSACTION.has(event.data.row))
        expect(event.data.reversal.reversedBy).toMatch(/^txn_/);
      else expect(event.data.reversal).toMatchObject({ status: "REVERSED" });
      expect(event.data.reversal.foundBy).toBe("recheck");
      const status = await jobStatus(h, event.data.jobId);
      expect(status.body.result.result).toBe("succeeded");
      expect(status.body.reversal.reversedBy).toBe(event.data.reversal.reversedBy);
    }

    const batch = await h.api("GET", `/v1/batches/${batchId}`);
    const ngn = batch.body.totals.NGN;
    const amounts = [...REVERSED_ROWS].map((n) => 100 + n);
    expect(ngn.reversed).toEqual({
      rows: REVERSED_ROWS.size,
      amount: String(amounts.reduce((a, b) => a + b)),
    });
    expect(ngn.succeeded.rows).toBe(ROWS - REVERSED_ROWS.size);
  });
});

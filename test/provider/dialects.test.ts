import { describe, expect, it } from "vitest";
import { BATCH_KIND_NAMES } from "../../src/batches/batch-kinds.js";
import { jsonRows } from "../../src/batches/batch-rows.js";
import { Batches } from "../../src/batches/batches.js";
import { statusMeaning } from "../../src/provider/read-answer.js";
import type { EnqueuedJob } from "../../src/queues/producer.js";
import type { JobResult } from "../../src/results/job-result.js";
import {
  batchFiles,
  everyKind,
  FOREIGN_PROFILE,
  FOREIGN_PROFILE_DOC,
  profileFile,
} from "../fixtures/provider-profiles.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { type PipelineHarness, usePipeline } from "../helpers/pipeline.js";
import { waitFor } from "../helpers/wait-until.js";

const ours = usePipeline();
const foreign = usePipeline(
  { MONEYQ_PROVIDER_PROFILE: profileFile(FOREIGN_PROFILE_DOC) },
  { sandbox: { profile: FOREIGN_PROFILE } },
);

interface LedgerLine {
  idempotencyKey: string | null;
  balance: string;
  memo: string;
  amount: string;
}

/** Runs every job kind and one batch of each batch kind; returns what a user can compare. */
async function runAll(p: PipelineHarness) {
  const demo = (await p.sb.control("GET", "/accounts")).body.data.accounts[0];
  const jobs = everyKind(demo);
  const enqueued = await p.producer().enqueueMany(jobs);
  const batches = new Batches({
    connection: p.connection(),
    prefix: p.config().redisPrefix,
    producer: p.producer(),
    results: p.workers().results,
  });
  const files = batchFiles(demo);
  const submitted = [];
  for (const kind of BATCH_KIND_NAMES) {
    const report = await batches.submit({
      account: "default",
      kind,
      source: jsonRows(files[kind], kind),
    });
    expect(report.accepted, kind).toBe(3);
    submitted.push(report.batchId);
  }
  const rows = BATCH_KIND_NAMES.length * 3;
  const results = await p.waitForResults(jobs.length + rows, 30_000);
  // Creations move no money: the ledger holds no effect of theirs to match.
  const moving = (kind: string) =>
    kind !== "wallet.create" && kind !== "collection.virtual-account";
  const movingJobs = enqueued.filter((_, i) => moving(jobs[i]?.kind as string));
  // Batch rows are all accounted for by their batch's counters (waitForBatch, below).
  const batchJobs = results.filter((r) => r.batchId !== undefined && r.batchId !== "kinds");
  expect(batchJobs).toHaveLength(rows);
  await expectExactlyOnce(
    p.sb,
    demo.accountId,
    [...movingJobs, ...batchJobs],
    results.filter((r) => moving(r.kind)),
  );
  const statuses = await Promise.all(submitted.map((id) => waitForBatch(batches, "default", id)));
  const ledger = (await p.sb.control("GET", "/ledger")).body.data.entries as LedgerLine[];
  return { enqueued, results, ledger, statuses };
}

function waitForBatch(batches: Batches, account: string, id: string) {
  return waitFor(
    () => batches.status(account, id),
    (status) => status.finished === status.accepted,
    20_000,
    (status) => `batch ${id} to finish (${status.finished} of ${status.accepted})`,
    50,
  );
}

/** A result without what differs by dialect or by arrival order (ids, words, times). */
function comparable(p: PipelineHarness, r: JobResult) {
  return {
    key: r.idempotencyKey,
    kind: r.kind,
    result: r.result,
    code: r.code,
    message: r.message,
    status: r.upstreamStatus && statusMeaning(p.config().provider, r.upstreamStatus),
    hasUpstreamId: r.upstreamId !== undefined,
  };
}

const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
// The dialect's shape check adds one transfer of its own ("shape-1"), left out here.
const ledgerLines = (entries: LedgerLine[]) =>
  entries
    .filter((e) => e.idempotencyKey !== "shape-1")
    // Ids in memos follow arrival order, which concurrency shuffles.
    .map(
      (e) =>
        `${e.idempotencyKey ?? "-"} ${e.balance} ${e.memo.replace(/\b(stx|txn|ord)_\d+/g, "$1_*")} ${e.amount}`,
    )
    .sort();

describe("a provider that speaks another dialect, read through its profile", () => {
  it("answers in its own shape: other names, words, strings for amounts, epoch times", async () => {
    const listed = await foreign.sb.api("GET", "/transactions", { query: { ccy: "NGN" } });
    expect(listed.status).toBe(200);
    const created = await foreign.sb.api("POST", "/transaction/transfer/bank", {
      idem: "shape-1",
      body: {
        amount: 12,
        currency: "NGN",
        bankCode: "044",
        accountNumber: "0123456789",
        accountName: "Ada Obi",
        bankName: "Access Bank",
      },
    });
    expect(created.status).toBe(200);
    const data = created.body.data;
    expect(data.transactionId).toBeUndefined();
    expect(data.status).toBeUndefined();
    expect(data.id).toMatch(/^txn_/);
    expect(data.state).toBe("PROCESSING");
    expect(data.amount).toBe("12.00");
    expect(typeof data.createdAt).toBe("number");
    expect(data.livemode).toBe(false);
    const looked = await foreign.sb.api("GET", `/transactions/${data.id}`);
    expect(["pending", "successful"]).toContain(looked.body.data.state);
  });

  it("gives the same results and the same ledger as our own dialect", async () => {
    const [a, b] = await Promise.all([runAll(ours), runAll(foreign)]);
    const left = a.results.map((r) => comparable(ours, r)).sort(byKey);
    const right = b.results.map((r) => comparable(foreign, r)).sort(byKey);
    expect(right).toEqual(left);
    expect(ledgerLines(b.ledger)).toEqual(ledgerLines(a.ledger));
    // The run is worth comparing: everything succeeded but the row forced to fail.
    const outcomes = left.map((r) => r.result);
    expect(outcomes.filter((r) => r === "succeeded")).toHaveLength(outcomes.length - 1);
    const failed = right.find((r) => r.result === "failed");
    expect(failed).toMatchObject({ kind: "payout.bank", code: "upstream_failed" });
    expect(failed?.message).toBeTruthy();
    expect(failed?.message).not.toMatch(/the provider reported/);
    expect(countKinds(b.enqueued, b.results)).toEqual(countKinds(a.enqueued, a.results));
    const summary = (s: Awaited<ReturnType<typeof waitForBatch>>) => [s.kind, s.state, s.counts];
    expect(b.statuses.map(summary)).toEqual(a.statuses.map(summary));
    expect(a.statuses.map(summary)).toContainEqual([
      "payout.bank",
      "completed_with_failures",
      expect.objectContaining({ succeeded: 2, failed: 1 }),
    ]);
  });
});

function countKinds(enqueued: readonly EnqueuedJob[], results: readonly JobResult[]) {
  const ids = new Set(enqueued.map((e) => e.jobId));
  const counts: Record<string, number> = {};
  for (const r of results) if (ids.has(r.jobId)) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
  return counts;
}

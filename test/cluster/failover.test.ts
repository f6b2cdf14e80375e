import { describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import type { EnqueuedJob } from "../../src/queues/producer.js";
import { payoutBatch } from "../fixtures/batches.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { nodePid, useOwnCluster } from "../helpers/own-cluster.js";
import { waitFor, waitUntil } from "../helpers/wait-until.js";

// Run by `npm run test:cluster`, on a cluster of its own: the master it kills stays dead.
const ROWS = 2000;
/** Every 50th row is a virtual account: a kind without an idempotency key. */
const KEYLESS_EVERY = 50;
/** Results recorded before the master is killed: the batch is well under way. */
const KILL_AFTER = 400;
const VA_PATH = "/transaction/collection/virtual-account";

const own = useOwnCluster({ MONEYQ_RATE_LIMIT_PER_SECOND: "200" });
const sb = own.sb;
const allResults = () => own.results();

/** The 2,000 rows: payouts of one batch, with a virtual account in place of every 50th. */
function rows(): JobInput[] {
  return payoutBatch("failover", ROWS).map((row, i) =>
    (i + 1) % KEYLESS_EVERY === 0
      ? {
          kind: "collection.virtual-account" as const,
          account: "default",
          idempotencyKey: `va-${i + 1}`,
          request: { body: { amount: 1000 + i, validFor: 30 } },
        }
      : row,
  );
}

describe("a master killed during a 2,000-row batch", () => {
  it("its replica takes over; every job ends once, with at most one effect each", async () => {
    const jobs = rows();
    const enqueued = await own.producer().enqueueMany(jobs);
    await waitFor(
      allResults,
      (found) => found.length >= KILL_AFTER,
      60_000,
      (found) => `${KILL_AFTER} results before the kill, have ${found.length}`,
    );
    const before = (await own.shardOf()).master;
    // SIGKILL: no shutdown, no last write to disk.
    process.kill(await nodePid(before), "SIGKILL");
    await waitUntil(
      async () => (await own.shardOf().catch(() => ({ master: before }))).master !== before,
      30_000,
      "the replica promoted in place of the killed master",
    );
    const done = await waitFor(
      allResults,
      (found) => new Set(found.map((r) => r.jobId)).size >= ROWS,
      180_000,
      (found) => `${ROWS} jobs with a result, have ${new Set(found.map((r) => r.jobId)).size}`,
    );
    // Results that arrive after the last job's first one would be second results.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const results = await allResults();
    expect(results.length).toBe(done.length);

    const keyless = (e: EnqueuedJob) => e.idempotencyKey.startsWith("va-");
    const payouts = enqueued.filter((e) => !keyless(e));
    const payoutIds = new Set(payouts.map((e) => e.jobId));
    const accountId = (await sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
    await expectExactlyOnce(
      sb,
      accountId,
      payouts,
      results.filter((r) => payoutIds.has(r.jobId)),
    );
    expect(results.filter((r) => payoutIds.has(r.jobId) && r.result !== "succeeded")).toEqual([]);

    // Keyless: one result each (above, with the others: every job once), and never more
    // virtual accounts created than jobs; each succeeded job names one of its own.
    const vaIds = new Set(enqueued.filter(keyless).map((e) => e.jobId));
    const vaResults = results.filter((r) => vaIds.has(r.jobId));
    expect(vaResults).toHaveLength(vaIds.size);
    const perJob = new Map<string, number>();
    for (const r of results) perJob.set(r.jobId, (perJob.get(r.jobId) ?? 0) + 1);
    expect([...perJob.values()].filter((n) => n > 1)).toEqual([]);
    expect(perJob.size).toBe(ROWS);
    const requests = (await sb.control("GET", "/requests", { query: { accountId } })).body.data
      .requests as { method: string; path: string }[];
    const created = requests.filter((r) => r.method === "POST" && r.path.endsWith(VA_PATH));
    expect(created.length).toBeLessThanOrEqual(vaIds.size);
    const succeeded = vaResults.filter((r) => r.result === "succeeded");
    expect(new Set(succeeded.map((r) => r.upstreamId)).size).toBe(succeeded.length);
    expect(created.length).toBeGreaterThanOrEqual(succeeded.length);
    expect(
      vaResults.filter((r) => r.result !== "succeeded" && r.result !== "needs_reconciliation"),
    ).toEqual([]);
  }, 300_000);
});

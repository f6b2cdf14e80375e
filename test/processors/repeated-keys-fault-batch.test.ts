import { describe, expect, it } from "vitest";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { payoutBatch } from "../fixtures/batches.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { usePipeline } from "../helpers/pipeline.js";

// A provider that refuses every repeated idempotency key with a 400 (no replay): a resend after
// a dropped answer is refused although the first send paid.
const FAULTS = { dropAfterCommitRate: 0.2, errorRate: 0.2, seed: 23 };
const p = usePipeline(
  { MONEYQ_CONCURRENCY: "32", MONEYQ_REQUEST_TIMEOUT_MS: "2000" },
  {
    settleDelayMs: 20,
    sandbox: { rejectRepeatedKeys: true },
    sandboxAccounts: [{ accountId: "acct_demo", apiKey: DEMO_API_KEY, faults: FAULTS }],
  },
);

describe("a batch through drops and 5xx, at a provider that refuses repeated keys", () => {
  it("never reports failed for a job whose first send may have paid", async () => {
    const enqueued = await p.producer().enqueueMany(payoutBatch("repeated-keys", 400));
    const results = await p.waitForResults(400, 120_000);
    await expectExactlyOnce(p.sb, "acct_demo", enqueued, results);
    expect(results.filter((r) => r.result === "failed")).toEqual([]);

    const ledger = (await p.sb.control("GET", "/ledger", { query: { accountId: "acct_demo" } }))
      .body.data.entries as { idempotencyKey: string | null }[];
    const paid = new Set(ledger.map((e) => e.idempotencyKey));
    const unsettled = results.filter((r) => r.result === "needs_reconciliation");
    // Drops happen at this rate: some resends were refused, and each went to an operator.
    expect(unsettled.length).toBeGreaterThan(0);
    for (const r of unsettled) {
      expect(r.code).toBe("outcome_unknown");
      expect(r.message).toContain("an earlier attempt may have reached the provider");
    }
    // Every job is either succeeded or held for an operator; a paid key is never lost.
    for (const r of results) expect(["succeeded", "needs_reconciliation"]).toContain(r.result);
    for (const key of paid) {
      if (key === null) continue;
      expect(results.find((r) => r.idempotencyKey === key)?.result).not.toBe("failed");
    }
  }, 180_000);
});

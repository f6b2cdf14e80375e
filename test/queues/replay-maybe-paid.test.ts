import { describe, expect, it } from "vitest";
import { DeadLetters } from "../../src/queues/dead-letters.js";
import { BANK_PAYOUT_BODY } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";

// A replayed job whose earlier requests may have reached the provider: the provider's refusal of
// the resend does not prove that nothing was paid.
const p = usePipeline({ MONEYQ_MAX_ATTEMPTS: "2", MONEYQ_CONFIRM_DEADLINE_MS: "300" });

describe("replaying a payout that ended with its outcome unknown", () => {
  it("a refusal of the resend ends needs_reconciliation again, never failed", async () => {
    const accountId = (await p.sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
    // Every request is answered 5xx: each may have reached the provider, none is known.
    await p.sb.control("PUT", `/accounts/${accountId}/faults`, { body: { errorRate: 1 } });
    let jobId: string;
    try {
      ({ jobId } = await p.producer().enqueue({
        kind: "payout.bank",
        account: "default",
        idempotencyKey: "replay-maybe-paid",
        // The sandbox refuses this amount for want of funds, as a balance the first send spent.
        request: { body: { ...BANK_PAYOUT_BODY, amount: 999.99 } },
      }));
      const first = await p.resultOf(jobId, 30_000);
      expect(first).toMatchObject({ result: "needs_reconciliation", code: "outcome_unknown" });
    } finally {
      await p.sb.control("DELETE", `/accounts/${accountId}/faults`);
    }

    const letters = new DeadLetters(p.connection(), p.config().redisPrefix, p.workers().results);
    expect(await letters.replay("default", jobId)).toBe(true);
    const again = await p.resultOf(jobId, 30_000, 1);
    expect(again.message).toMatch(/insufficient/);
    expect(again).toMatchObject({ result: "needs_reconciliation", code: "outcome_unknown" });
  });
});

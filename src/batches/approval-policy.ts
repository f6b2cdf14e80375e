import type { ApprovalPolicy } from "../config/load-config.js";
import { compareDecimal } from "../queues/job-money.js";
import type { BatchTotals } from "./batch-totals.js";

/**
 * Whether a batch with these requested totals waits for approval under its account's policy
 * (every batch, or one whose total in a currency is over that currency's amount), and how
 * long the approval may wait; undefined when it needs none.
 */
export function approvalNeeded(
  policy: ApprovalPolicy | undefined,
  totals: BatchTotals,
): { readonly expiresAfterMs: number | undefined } | undefined {
  if (policy === undefined) return undefined;
  const over = Object.entries(policy.batchesOver).some(([currency, limit]) => {
    const requested = totals[currency]?.requested.amount;
    return requested !== undefined && compareDecimal(requested, limit) > 0;
  });
  return policy.allBatches || over ? { expiresAfterMs: policy.expiresAfterMs } : undefined;
}

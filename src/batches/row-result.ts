import { jobIdFor } from "../queues/idempotency-key.js";
import type { JobResult } from "../results/job-result.js";
import type { ReportLine } from "../results/report-line.js";
import type { ResultCode } from "../results/result-codes.js";
import { BATCH_KINDS, type BatchKind } from "./batch-kinds.js";

/** What a batch row's job ended as without running: cancelled, or held for reconciliation. */
export interface RowEnding {
  readonly result: "cancelled" | "needs_reconciliation";
  readonly code: ResultCode;
  readonly message: string;
}

/**
 * The terminal result of a row of `batch` whose job ended without a run of its own (cancelled
 * and withdrawn, or never enqueued): no attempt, from the batch's creation to now.
 */
export function rowResult(
  batch: { readonly batchId: string; readonly account: string; readonly kind: BatchKind },
  createdAt: string,
  line: ReportLine & { readonly idempotencyKey: string },
  ending: RowEnding,
): JobResult {
  const now = new Date();
  return {
    jobId: jobIdFor(batch.account, line.idempotencyKey),
    kind: BATCH_KINDS[batch.kind].jobKind,
    account: batch.account,
    idempotencyKey: line.idempotencyKey,
    batchId: batch.batchId,
    row: line.row,
    ...(line.reference !== undefined && { reference: line.reference }),
    ...ending,
    attempts: 0,
    enqueuedAt: createdAt,
    finishedAt: now.toISOString(),
    durationMs: Math.max(0, now.getTime() - Date.parse(createdAt)),
  };
}

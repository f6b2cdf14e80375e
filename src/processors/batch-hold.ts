import { DelayedError, type Job } from "bullmq";
import { BatchDecisionError, BatchNotFoundError } from "../batches/batch-errors.js";
import type { BatchStore } from "../batches/batch-store.js";
import { CANCELLED_BY } from "../batches/batches.js";
import type { JobEnvelope } from "../queues/job-envelope.js";
import type { Ending } from "./finish-job.js";

/** A job of a batch awaiting approval without an expiry waits this long before it asks again. */
const APPROVAL_RECHECK_MS = 3_600_000;
/** A hold this close to what the batch now asks is left as it is. */
const HOLD_TOLERANCE_MS = 1_000;

/**
 * The gate held the job for its batch (awaiting approval, or scheduled): it goes back to
 * BullMQ's delayed set, unsent and without using an attempt. Approval releases the batch's
 * delayed jobs; this one was not delayed while the gate answered, so it looks once more after
 * moving and, if the batch was decided meanwhile, takes the batch's time instead.
 */
export async function holdForBatch(
  batches: BatchStore,
  job: Job,
  token: string | undefined,
  envelope: JobEnvelope,
  heldMs: number,
): Promise<never> {
  const delayMs = heldMs > 0 ? heldMs : APPROVAL_RECHECK_MS;
  await job.moveToDelayed(Date.now() + delayMs, token);
  const hold = await batches.holdOf(envelope.account, envelope.batchId as string);
  if (!hold.approvalPending) {
    const due = Math.max(0, hold.notBeforeMs - Date.now());
    if (due < delayMs - HOLD_TOLERANCE_MS) {
      if (due > 0) await job.changeDelay(due);
      else await job.promote();
    }
  }
  throw new DelayedError();
}

/**
 * How a job ends whose batch the gate found cancelled, by why: cancelled, rejected, or its
 * approval expired (recorded here by the first job to find it, once).
 */
export async function cancelledEnding(batches: BatchStore, envelope: JobEnvelope): Promise<Ending> {
  const { account } = envelope;
  const batchId = envelope.batchId as string;
  let hold = await batches.holdOf(account, batchId);
  if (hold.approvalPending) {
    await batches.decide(account, batchId, "expire", "").catch((error: unknown) => {
      // Decided, or gone, meanwhile: its reason is read below.
      if (!(error instanceof BatchDecisionError || error instanceof BatchNotFoundError))
        throw error;
    });
    hold = await batches.holdOf(account, batchId);
  }
  const reason = hold.cancelReason as keyof typeof CANCELLED_BY | undefined;
  return {
    result: "cancelled",
    ...(CANCELLED_BY[reason ?? "cancelled"] ?? CANCELLED_BY.cancelled),
  };
}

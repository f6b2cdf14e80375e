import { DelayedError, type Job } from "bullmq";
import type { JobEnvelope } from "../queues/job-envelope.js";
import {
  CANCELLED_BY,
  CANCELLED_MAYBE_SENT,
  type CancelReason,
  type WorkHolds,
} from "../queues/work-holds.js";
import type { Ending } from "./finish-job.js";

/** A job awaiting approval without an expiry waits this long before it asks again. */
const APPROVAL_RECHECK_MS = 3_600_000;
/** A hold this close to what the work now asks is left as it is. */
const HOLD_TOLERANCE_MS = 1_000;

/**
 * The gate held the job (its batch, or its own hold: awaiting approval, or scheduled): it goes
 * back to BullMQ's delayed set, unsent and without using an attempt. Approval releases the
 * delayed jobs; this one was not delayed while the gate answered, so it looks once more after
 * moving and, if the work was decided meanwhile, takes the work's time instead.
 */
export async function holdForWork(
  holds: WorkHolds,
  holdKey: string,
  job: Job,
  token: string | undefined,
  heldMs: number,
): Promise<never> {
  const delayMs = heldMs > 0 ? heldMs : APPROVAL_RECHECK_MS;
  await job.moveToDelayed(Date.now() + delayMs, token);
  const hold = await holds.holdOf(holdKey);
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
 * How a job ends whose work the gate found cancelled, by why: cancelled, rejected, or its
 * approval expired (recorded here by the first job to find it, once). One whose earlier attempt
 * may have reached the provider (`maybeSent`) needs reconciling instead.
 */
export async function cancelledEnding(
  holds: WorkHolds,
  holdKey: string,
  envelope: JobEnvelope,
  maybeSent: boolean,
): Promise<Ending> {
  const scope = envelope.batchId === undefined ? "job" : "batch";
  if (maybeSent) return { result: "needs_reconciliation", ...CANCELLED_MAYBE_SENT[scope] };
  let hold = await holds.holdOf(holdKey);
  if (hold.approvalPending) {
    // An answer that is not a decision (decided, or gone, meanwhile) leaves the reason as read.
    await holds.decide(envelope.account, holdKey, "expire", "", scope);
    hold = await holds.holdOf(holdKey);
  }
  const reason = (hold.cancelReason ?? "cancelled") as CancelReason;
  return { result: "cancelled", ...(CANCELLED_BY[scope][reason] ?? CANCELLED_BY[scope].cancelled) };
}

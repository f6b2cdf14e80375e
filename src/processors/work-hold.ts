import { DelayedError, type Job } from "bullmq";
import type { JobEnvelope } from "../queues/job-envelope.js";
import { runFromDelayed } from "../queues/producer.js";
import {
  type BatchCancelReason,
  CANCELLED_BY,
  CANCELLED_MAYBE_SENT,
  type WorkHolds,
} from "../queues/work-holds.js";
import type { ResultCode } from "../results/result-codes.js";
import type { Ending } from "./finish-job.js";

/** A job awaiting approval without an expiry waits this long before it asks again. */
const APPROVAL_RECHECK_MS = 3_600_000;
/** A hold this close to what the work now asks is left as it is. */
const HOLD_TOLERANCE_MS = 1_000;

/**
 * The gate held the job (its batch, or its own hold: awaiting approval, scheduled, or its
 * batch not sealed yet): it goes back to BullMQ's delayed set, unsent and without using an
 * attempt. Approval releases the delayed jobs, and so does the seal those of `heldSet` (the
 * batch's record of the jobs held while unsealed, which this job joins first). This one was not
 * delayed while the gate answered, so it looks once more after moving and, if the work was
 * decided or sealed meanwhile, takes the work's time instead.
 */
export async function holdForWork(
  holds: WorkHolds,
  where: { readonly holdKey: string; readonly heldSet: string | undefined },
  job: Job,
  token: string | undefined,
  heldMs: number,
): Promise<never> {
  const { holdKey, heldSet } = where;
  const delayMs = heldMs > 0 ? heldMs : APPROVAL_RECHECK_MS;
  if (heldSet !== undefined && (await holds.holdOf(holdKey)).unsealed)
    await holds.recordHeld(heldSet, job.id as string);
  await job.moveToDelayed(Date.now() + delayMs, token);
  const hold = await holds.holdOf(holdKey);
  if (!hold.approvalPending && !hold.unsealed) {
    const due = Math.max(0, hold.notBeforeMs - Date.now());
    // The seal's or an approval's release may have moved it first: then it runs already.
    if (due < delayMs - HOLD_TOLERANCE_MS) await runFromDelayed(job, due);
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
  let hold = await holds.holdOf(holdKey);
  // A batch never sealed had every job held by the gate: none was sent, whatever its runs say
  // (a Redis refusing writes can leave a held job stalled, which alone would count as "maybe").
  if (maybeSent && !hold.neverSealed)
    return { result: "needs_reconciliation", ...CANCELLED_MAYBE_SENT[scope] };
  if (hold.approvalPending) {
    // An answer that is not a decision (decided, or gone, meanwhile) leaves the reason as read.
    await holds.decide(envelope.account, holdKey, "expire", "", scope);
    hold = await holds.holdOf(holdKey);
  }
  const reasons: Readonly<Record<string, { code: ResultCode; message: string }>> =
    CANCELLED_BY[scope];
  const reason = (hold.cancelReason ?? "cancelled") as BatchCancelReason;
  return { result: "cancelled", ...(reasons[reason] ?? reasons.cancelled) };
}

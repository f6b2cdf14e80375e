import type { JobEnvelope } from "./job-envelope.js";

/** Where a job is on its way: submitting, confirming a PENDING answer, or looking up an unknown outcome. */
export type Phase = "submit" | "confirm" | "reconcile";

/** What moneyq keeps in a job beside the envelope, so a later run knows where the job stands. */
export interface JobState {
  readonly phase: Phase;
  readonly upstreamId?: string | undefined;
  readonly upstreamStatus?: string | undefined;
  readonly pendingSince?: number | undefined;
  readonly lookups?: number | undefined;
  /**
   * Set by earlier versions just before a non-idempotent request was sent; now the rate gate
   * keeps that record (a field of the job's hash). Still read: a later run must not resend.
   */
  readonly sentAt?: number | undefined;
  /** An attempt may have reached the provider: a refusal of a resend is not a failure. */
  readonly possiblySent?: boolean | undefined;
  readonly firstStartedAt?: number | undefined;
}

/** The data of a BullMQ job of an account queue. */
export interface JobData {
  readonly envelope: JobEnvelope;
  readonly state?: JobState;
}

/** What of a BullMQ job tells whether an earlier run may have sent its request. */
export interface JobRuns {
  readonly attemptsMade: number;
  readonly stalledCounter: number;
}

/**
 * Whether a request of the job may already have reached the provider: it is past submitting,
 * an attempt ended in a way that may have been sent, an earlier attempt or a stalled run (its
 * worker died, perhaps mid-request) went before, or a "sent" mark says so. Such a job is never
 * reported "cancelled before it was sent": stopped, it needs reconciling.
 */
export function mayHaveBeenSent(
  runs: JobRuns,
  state: JobState | undefined,
  sentMark = false,
): boolean {
  return (
    sentMark ||
    runs.attemptsMade > 0 ||
    runs.stalledCounter > 0 ||
    (state !== undefined &&
      (state.phase !== "submit" || state.possiblySent === true || state.sentAt !== undefined))
  );
}

import { z } from "zod";
import { RESULT_CODES } from "./result-codes.js";

export const RESULT_KINDS = [
  "succeeded",
  "failed",
  "rejected",
  "needs_reconciliation",
  "cancelled",
] as const;
export type ResultKind = (typeof RESULT_KINDS)[number];

/** The one terminal result of a job, as consumers of the stream and webhooks receive it. */
export const JobResult = z.object({
  jobId: z.string(),
  /** A job kind; on a rejected job, whatever kind it claimed. */
  kind: z.string(),
  account: z.string(),
  idempotencyKey: z.string(),
  batchId: z.string().optional(),
  row: z.int().optional(),
  reference: z.string().optional(),
  result: z.enum(RESULT_KINDS),
  /**
   * Stable code on failed, rejected, cancelled and needs_reconciliation (for example
   * `insufficient_funds`): one of RESULT_CODES, docs/errors.md. A code this release does not
   * know (written by a later one, read after a rollback or by an older consumer) is read as
   * written, never refused: only a known code can be written, as the brand cannot be made.
   */
  code: z.union([z.enum(RESULT_CODES), z.string().brand<"LaterResultCode">()]).optional(),
  /** Upstream message, or the validation issues, when not succeeded. */
  message: z.string().optional(),
  /** Transaction or order id at the provider. */
  upstreamId: z.string().optional(),
  /** Final upstream status (SUCCESSFUL, FAILED, COMPLETED, ...). */
  upstreamStatus: z.string().optional(),
  /**
   * On `unrecognised_answer`: the provider's `data` as received (API key redacted), so an
   * operator can settle the job by hand.
   */
  upstreamData: z.unknown().optional(),
  attempts: z.int(),
  enqueuedAt: z.string(),
  finishedAt: z.string(),
  durationMs: z.int(),
});
export type JobResult = z.infer<typeof JobResult>;

/**
 * Whether a job with this result ends completed: it succeeded, or was cancelled before anything
 * was sent. Any other result leaves it in the dead letters, where an operator can replay it.
 */
export const endsCompleted = (result: ResultKind): boolean =>
  result === "succeeded" || result === "cancelled";

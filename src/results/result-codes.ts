import type { ProviderErrorCode } from "../errors/error-codes.js";

/** The provider's refusals a job's result names with the client's code (client/errors.ts). */
const PROVIDER_REFUSALS = [
  "validation_error",
  "refused",
  "insufficient_funds",
  "not_found",
  "idempotency_key_reused",
  "invalid_request",
] as const satisfies readonly ProviderErrorCode[];

/**
 * Every code a job's terminal result can carry (on failed, rejected, cancelled and
 * needs_reconciliation results), each documented in docs/errors.md, "Result codes".
 */
export const RESULT_CODES = [
  ...PROVIDER_REFUSALS,
  "upstream_failed",
  "unrecognised_answer",
  "outcome_unknown",
  "not_sent",
  "confirm_deadline",
  "unknown_account",
  "job_cancelled",
  "job_rejected",
  "approval_expired",
  "batch_cancelled",
  "batch_rejected",
  "submission_abandoned",
  "cancelled_maybe_sent",
] as const;
export type ResultCode = (typeof RESULT_CODES)[number];

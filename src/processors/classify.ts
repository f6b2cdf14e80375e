import {
  PaymentsAuthenticationError,
  PaymentsError,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsValidationError,
} from "../client/errors.js";

/** Where a job is on its way: submitting, confirming a PENDING answer, or looking up an unknown outcome. */
export type Phase = "submit" | "confirm" | "reconcile";

/** What the upstream said, reduced to what decides the next step. */
export type Outcome =
  | {
      readonly type: "answer";
      readonly state: "succeeded" | "failed" | "pending";
      readonly message?: string;
    }
  | { readonly type: "error"; readonly error: unknown };

export interface ClassifyContext {
  readonly phase: Phase;
  /** The operation takes an idempotency key, so resending it is safe. */
  readonly idempotent: boolean;
  /** No submission attempt is left after this one. */
  readonly lastAttempt: boolean;
}

export type RetryReason =
  | "server_error"
  | "timeout"
  | "connection_error"
  | "in_flight"
  | "invalid_response"
  | "unexpected";

export type Action =
  | { readonly type: "succeed" }
  | { readonly type: "fail"; readonly code: string; readonly message: string }
  | { readonly type: "confirm" }
  | { readonly type: "pause_account"; readonly message: string }
  | { readonly type: "rate_limit"; readonly delayMs: number }
  | { readonly type: "retry"; readonly reason: RetryReason }
  | { readonly type: "reconcile"; readonly reason: RetryReason }
  | { readonly type: "needs_reconciliation"; readonly code: string; readonly message: string };

/** A 429 without Retry-After pauses the account this long. */
export const DEFAULT_RATE_LIMIT_PAUSE_MS = 1_000;

function retryReason(error: unknown): RetryReason {
  if (error instanceof PaymentsIdempotencyInFlightError) return "in_flight";
  if (error instanceof PaymentsError) {
    if (
      error.code === "server_error" ||
      error.code === "timeout" ||
      error.code === "connection_error"
    )
      return error.code;
    if (error.code === "invalid_response") return "invalid_response";
  }
  return "unexpected";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The one decision of what to do with an upstream answer (docs/pipeline.md, "Classification").
 * Pure: it reads the outcome and the job's phase, and names the next step.
 */
export function classify(outcome: Outcome, ctx: ClassifyContext): Action {
  if (outcome.type === "answer") {
    if (outcome.state === "succeeded") return { type: "succeed" };
    if (outcome.state === "pending") return { type: "confirm" };
    return {
      type: "fail",
      code: "upstream_failed",
      message: outcome.message ?? "the provider reported the operation failed",
    };
  }
  const { error } = outcome;
  if (error instanceof PaymentsRateLimitError) {
    return { type: "rate_limit", delayMs: error.retryAfterMs ?? DEFAULT_RATE_LIMIT_PAUSE_MS };
  }
  if (error instanceof PaymentsAuthenticationError)
    return { type: "pause_account", message: error.message };
  if (error instanceof PaymentsIdempotencyKeyReusedError) {
    return { type: "fail", code: error.code, message: error.message };
  }
  // A lookup that cannot see the resource yet, or fails for a passing reason: look again later.
  if (ctx.phase === "confirm") {
    if (error instanceof PaymentsNotFoundError || !(error instanceof PaymentsValidationError))
      return { type: "confirm" };
  }
  if (error instanceof PaymentsValidationError || error instanceof PaymentsNotFoundError) {
    return { type: "fail", code: error.code, message: error.message };
  }
  // The outcome is unknown from here on: the request may have had its effect.
  const reason = retryReason(error);
  if (!ctx.idempotent) {
    const neverSent = error instanceof PaymentsError && !error.mayHaveReachedServer;
    if (neverSent && !ctx.lastAttempt) return { type: "retry", reason };
    return {
      type: "needs_reconciliation",
      code: neverSent ? "not_sent" : "outcome_unknown",
      message: neverSent
        ? `never reached the provider after every attempt: ${messageOf(error)}`
        : `the request may have reached the provider and cannot be resent safely: ${messageOf(error)}`,
    };
  }
  if (ctx.phase === "reconcile") {
    // The provider still holds the first request: its outcome is coming, so look again later.
    if (error instanceof PaymentsIdempotencyInFlightError)
      return { type: "reconcile", reason: "in_flight" };
    return {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message: `outcome still unknown after lookup: ${messageOf(error)}`,
    };
  }
  return ctx.lastAttempt ? { type: "reconcile", reason } : { type: "retry", reason };
}

import {
  PaymentsAuthenticationError,
  PaymentsError,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsInsufficientFundsError,
  PaymentsInvalidRequestError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsValidationError,
} from "../client/errors.js";
import { type TransientFailure, transientFailure } from "../client/retry.js";
import type { Phase } from "../queues/job-data.js";
import type { ResultCode } from "../results/result-codes.js";

/** What the upstream said, reduced to what decides the next step. */
export type Outcome =
  | {
      readonly type: "answer";
      readonly state: "succeeded" | "failed" | "pending";
      readonly message?: string;
    }
  | { readonly type: "error"; readonly error: unknown }
  /** A definite answer (`success: true`) whose data the provider profile could not read. */
  | { readonly type: "unrecognised"; readonly message: string };

export interface ClassifyContext {
  readonly phase: Phase;
  /** The operation takes an idempotency key, so resending it is safe. */
  readonly idempotent: boolean;
  /** No submission attempt (reconciling: no lookup) is left after this one. */
  readonly lastAttempt: boolean;
  /**
   * Recorded when an earlier attempt failed in a way that may have reached the provider (its
   * answer was lost): a refusal of the resend is then no proof that nothing was paid.
   */
  readonly possiblySent?: boolean;
  /**
   * Any earlier attempt or stalled run, a later phase or a sent mark (mayHaveBeenSent): the
   * conservative reading, which also covers jobs that earlier releases ran without recording
   * `possiblySent`.
   */
  readonly sentBefore: boolean;
  /**
   * A refusal for insufficient funds holds the job and its currency's lane instead of failing
   * it (payouts: docs/safety.md).
   */
  readonly holdsOnFunds?: boolean;
}

/** Why an attempt is retried: a passing failure of the client's table, or an error of none. */
export type RetryReason = TransientFailure | "unexpected";

export type Action =
  | { readonly type: "succeed" }
  | { readonly type: "fail"; readonly code: ResultCode; readonly message: string }
  | { readonly type: "reject"; readonly code: ResultCode; readonly message: string }
  | { readonly type: "confirm" }
  | { readonly type: "pause_account"; readonly message: string }
  /** Refused for insufficient funds: held, with its currency's lane, until funds come. */
  | { readonly type: "hold_funds"; readonly message: string }
  | {
      readonly type: "rate_limit";
      /** How long the account pauses: the provider's Retry-After within bounds. */
      readonly delayMs: number;
      /** The Retry-After as the provider gave it, in ms, when it gave one. */
      readonly askedMs?: number;
    }
  | { readonly type: "retry"; readonly reason: RetryReason }
  | { readonly type: "reconcile"; readonly reason: RetryReason }
  | { readonly type: "needs_reconciliation"; readonly code: ResultCode; readonly message: string };

/** A 429 without Retry-After pauses the account this long. */
export const DEFAULT_RATE_LIMIT_PAUSE_MS = 1_000;

/**
 * The bounds of a 429's pause. A Retry-After of 0 or in the past still pauses a moment (a pause
 * of nothing cannot be stored); one past five minutes (a gateway counting in milliseconds, or
 * a hostile answer) would stop the account for hours with no way to resume it, so it is cut
 * to five minutes, as the client's own retries cut it (client/retry.ts).
 */
export const MIN_RATE_LIMIT_PAUSE_MS = 1;
export const MAX_RATE_LIMIT_PAUSE_MS = 300_000;

/** The pause a 429 asks for (its Retry-After in ms, if it had one), within the bounds. */
export function rateLimitPauseMs(retryAfterMs: number | undefined): number {
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs))
    return DEFAULT_RATE_LIMIT_PAUSE_MS;
  return Math.min(
    MAX_RATE_LIMIT_PAUSE_MS,
    Math.max(MIN_RATE_LIMIT_PAUSE_MS, Math.ceil(retryAfterMs)),
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The one decision of what to do with an upstream answer (docs/pipeline.md, "Classification").
 * Pure: it reads the outcome and the job's phase, and names the next step.
 */
export function classify(outcome: Outcome, ctx: ClassifyContext): Action {
  // Never resent: the request had its effect, only its description is unreadable.
  if (outcome.type === "unrecognised")
    return { type: "needs_reconciliation", code: "unrecognised_answer", message: outcome.message };
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
  // Nothing left this machine and resending cannot help; but an earlier attempt may have been
  // sent (a key an older release accepted, a lookup), so only a job never sent is "rejected".
  if (error instanceof PaymentsInvalidRequestError) {
    const message = `${error.field}: ${error.rule}; the request was not sent`;
    if (ctx.phase !== "submit")
      return { type: "needs_reconciliation", code: error.code, message: `lookup: ${message}` };
    return ctx.sentBefore
      ? {
          type: "needs_reconciliation",
          code: error.code,
          message: `${message}, but an earlier attempt may have been`,
        }
      : { type: "reject", code: error.code, message };
  }
  if (error instanceof PaymentsRateLimitError) {
    return {
      type: "rate_limit",
      delayMs: rateLimitPauseMs(error.retryAfterMs),
      ...(error.retryAfterMs !== undefined && { askedMs: error.retryAfterMs }),
    };
  }
  if (error instanceof PaymentsAuthenticationError)
    return { type: "pause_account", message: error.message };
  // A refusal of a resend says nothing of an earlier attempt that may have had its effect (a
  // provider refusing a repeated key, a balance the first send spent): never `failed`.
  const refusal =
    error instanceof PaymentsValidationError ||
    error instanceof PaymentsIdempotencyKeyReusedError ||
    (error instanceof PaymentsNotFoundError && ctx.phase !== "confirm");
  if (refusal && (ctx.possiblySent === true || ctx.phase !== "submit")) {
    return {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message: `an earlier attempt may have reached the provider, which now refuses: ${messageOf(error)}`,
    };
  }
  if (error instanceof PaymentsIdempotencyKeyReusedError) {
    return { type: "fail", code: error.code, message: error.message };
  }
  // A definite refusal of a first send: nothing moved, so the same key may be sent again later.
  if (error instanceof PaymentsInsufficientFundsError && ctx.holdsOnFunds === true) {
    return { type: "hold_funds", message: error.message };
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
  const reason: RetryReason = transientFailure(error) ?? "unexpected";
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
    // One passing 5xx must not hand a job to an operator: the same key is sent again, as many
    // times as a submission is tried (and within the deadline), before it is declared unknown.
    if (!ctx.lastAttempt) return { type: "reconcile", reason };
    return {
      type: "needs_reconciliation",
      code: "outcome_unknown",
      message: `outcome still unknown after lookup: ${messageOf(error)}`,
    };
  }
  return ctx.lastAttempt ? { type: "reconcile", reason } : { type: "retry", reason };
}

/** Whether a failed attempt's request may have reached the provider (job state records it). */
export function mayHaveReached(outcome: Outcome): boolean {
  if (outcome.type !== "error") return true;
  return !(outcome.error instanceof PaymentsError) || outcome.error.mayHaveReachedServer;
}

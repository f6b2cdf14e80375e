import {
  PaymentsError,
  PaymentsIdempotencyInFlightError,
  PaymentsRateLimitError,
  PaymentsResponseError,
} from "./errors.js";

export interface RetryPolicy {
  /** Delay before the second attempt; doubles each attempt. Default 500. */
  readonly baseDelayMs: number;
  /** Cap on the exponential delay. Default 30000. */
  readonly maxDelayMs: number;
  /** Cap on a server's Retry-After, so a bad header cannot park work for hours. Default 300000. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 300_000,
});

/** A failure that passes: the same request, sent again with the same key, may succeed. */
export type TransientFailure =
  | "server_error"
  | "timeout"
  | "connection_error"
  | "in_flight"
  | "invalid_response";

/**
 * The one table of passing failures: a 5xx, a timeout, a broken connection, a key still in
 * flight, an answer that is not the envelope. The pipeline's classifier reads it too
 * (processors/classify.ts), so a caller of the client and the workers retry the same errors.
 * Undefined for a definite refusal (validation, authentication, not found, key reuse, a request
 * that cannot be sent), for a 429 (a pause, not a failure), for a definite answer (a 2xx saying
 * `success: true` in a body that is otherwise unreadable: its effect is certain, it is never
 * sent again) and for what is not the client's.
 */
export function transientFailure(error: unknown): TransientFailure | undefined {
  if (error instanceof PaymentsIdempotencyInFlightError) return "in_flight";
  if (error instanceof PaymentsResponseError && error.definiteAnswer !== undefined)
    return undefined;
  if (!(error instanceof PaymentsError)) return undefined;
  switch (error.code) {
    case "server_error":
    case "timeout":
    case "connection_error":
    case "invalid_response":
      return error.code;
    default:
      return undefined;
  }
}

/**
 * Whether another attempt with the same idempotency key may succeed: a passing failure, or a
 * 429 (after its delay). Definite refusals (validation, authentication, not found, key reuse)
 * are final.
 */
export function shouldRetry(error: unknown): boolean {
  return error instanceof PaymentsRateLimitError || transientFailure(error) !== undefined;
}

/**
 * Delay before attempt `attempt + 1`, after `attempt` (1-based) failed with `error`.
 * Exponential and capped, with equal jitter (half fixed, half random) so that a burst of
 * failures spreads out. A 429's Retry-After is honoured, plus up to 10% (at most 1 s) of jitter.
 */
export function retryDelayMs(
  attempt: number,
  error: unknown,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  random: () => number = Math.random,
): number {
  if (error instanceof PaymentsRateLimitError && error.retryAfterMs !== undefined) {
    const wait = Math.min(error.retryAfterMs, policy.maxRetryAfterMs);
    return Math.round(wait + random() * Math.min(wait * 0.1, 1000));
  }
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Parses a Retry-After header (delta seconds or HTTP date) into milliseconds. */
export function parseRetryAfter(
  value: string | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Every code an error of moneyq carries, by where it arises. Each is documented, with what it
 * means and what to do, in docs/errors.md (test/habits/error-codes-doc.test.ts fails on one
 * missing there). A class that extends MoneyqError names one of these: a code not listed here
 * does not compile.
 */
export const ERROR_CODES = Object.freeze({
  /** The typed client's (client/errors.ts): what the provider's answer, or its absence, was. */
  provider: [
    "validation_error",
    "refused",
    "insufficient_funds",
    "authentication_failed",
    "not_found",
    "idempotency_in_flight",
    "idempotency_key_reused",
    "rate_limited",
    "server_error",
    "timeout",
    "connection_error",
    "invalid_response",
    "invalid_request",
  ],
  /** Redis refusing writes or out of reach (redis/refusals.ts). */
  redis: [
    "redis_out_of_memory",
    "redis_read_only",
    "redis_not_persisting",
    "redis_not_replicated",
    "redis_unavailable",
  ],
  /** Enqueueing, deciding, cancelling, replaying and resolving jobs. */
  jobs: [
    "invalid_job",
    "payment_repeated",
    "replay_conflict",
    "job_not_cancellable",
    "not_awaiting_approval",
    "approval_expired",
    "own_job",
    "not_resolvable",
    "already_resolved",
    "own_resolution",
    "no_request",
    "lock_lost",
  ],
  /** Batches: their files, submissions and decisions. */
  batches: [
    "invalid_header",
    "invalid_csv",
    "commented_line",
    "invalid_rows",
    "empty_batch",
    "too_large",
    "batch_refused",
    "batch_not_found",
    "batch_ambiguous",
    "batch_not_cancellable",
    "batch_id_reused",
    "submission_under_way",
    "own_batch",
    "invalid_option",
  ],
  /** Webhooks: their addresses, secrets and the verifier's arguments. */
  webhooks: ["webhook_address_blocked", "webhook_secret_invalid", "webhook_argument_invalid"],
  /** A provider adapter module (provider/load-adapter.ts, provider/adapter.ts). */
  adapter: ["adapter_unloadable", "adapter_failed"],
  /** Starting and running the service, and the CLI's checks. */
  service: ["config_invalid", "unsafe_redis", "sweep_busy", "read_not_sent"],
} as const);

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES][number];
export type ProviderErrorCode = (typeof ERROR_CODES.provider)[number];
export type RedisTroubleCode = (typeof ERROR_CODES.redis)[number];

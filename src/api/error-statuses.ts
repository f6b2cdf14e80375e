import type { ErrorCode } from "../errors/error-codes.js";

/**
 * The one table of the API's error codes and their HTTP statuses (docs/errors.md, "API error
 * codes"). A domain error the API answers keeps its own code (error-codes.ts); the others are
 * the API's own. `bad_request` alone takes the status the framework or Node gave a request it
 * could not read (a 4xx not named here).
 */
export const API_ERROR_STATUS = Object.freeze({
  // The request as sent.
  invalid_request: 400,
  invalid_body: 400,
  invalid_url: 400,
  invalid_job: 400,
  bad_request: 400,
  invalid_header: 400,
  invalid_csv: 400,
  commented_line: 400,
  invalid_rows: 400,
  empty_batch: 400,
  unauthenticated: 401,
  forbidden: 403,
  own_job: 403,
  own_batch: 403,
  own_work: 403,
  own_resolution: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  body_too_large: 413,
  too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  // A conflict with what moneyq holds.
  idempotency_key_reused: 409,
  payment_repeated: 409,
  replay_conflict: 409,
  batch_id_reused: 409,
  submission_under_way: 409,
  batch_not_cancellable: 409,
  job_not_cancellable: 409,
  not_awaiting_approval: 409,
  approval_expired: 409,
  not_resolvable: 409,
  already_resolved: 409,
  no_request: 409,
  not_failed: 409,
  outcome_unknown: 409,
  batch_refused: 422,
  // moneyq in trouble: the same request again later is safe.
  redis_out_of_memory: 503,
  redis_read_only: 503,
  redis_not_persisting: 503,
  redis_not_replicated: 503,
  redis_unavailable: 503,
  internal_error: 500,
} as const satisfies Readonly<Record<string, number>>);

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

/** The domain errors' codes the API answers with as they are. */
export type AnsweredErrorCode = Extract<ErrorCode, ApiErrorCode>;

/** Whether the API answers `code` as it is: a domain error that reaches it keeps its code. */
export function isAnsweredCode(code: string): code is AnsweredErrorCode {
  return Object.hasOwn(API_ERROR_STATUS, code);
}

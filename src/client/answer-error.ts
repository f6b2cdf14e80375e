import { ErrorEnvelope } from "../contract/envelope.js";
import { cutText } from "../provider/bounds.js";
import {
  PaymentsAuthenticationError,
  type PaymentsError,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsInsufficientFundsError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsResponseError,
  PaymentsServerError,
  PaymentsValidationError,
} from "./errors.js";
import { parseRetryAfter } from "./retry.js";

export interface UpstreamAnswer {
  readonly operation: string;
  readonly status: number;
  /** Parsed JSON, or the raw text when the body was not JSON. Already redacted. */
  readonly body: unknown;
  /** The body as parsed, not redacted: read for its code and message, never kept. */
  readonly readable: unknown;
  /** Redacts what is taken from `readable`. */
  readonly redact: (text: string) => string;
  readonly requestId: string | undefined;
  readonly retryAfter: string | undefined;
}

/** Maps a non-success answer to the error class that says what the caller may do next. */
export function toAnswerError(answer: UpstreamAnswer): PaymentsError {
  const envelope = ErrorEnvelope.safeParse(answer.readable);
  const code = envelope.success ? envelope.data.code : undefined;
  const upstreamCode = code === undefined ? undefined : answer.redact(code);
  // Cut: the message travels into results and webhooks.
  const upstreamMessage = envelope.success
    ? cutText(answer.redact(envelope.data.message))
    : undefined;
  const init = {
    operation: answer.operation,
    status: answer.status,
    upstreamCode,
    body: answer.body,
    requestId: answer.requestId,
    mayHaveReachedServer: true,
    message: `${answer.operation}: ${upstreamMessage ?? `upstream answered HTTP ${answer.status}`}`,
  };
  const { status } = answer;
  if (code === "idempotency_key_reused") return new PaymentsIdempotencyKeyReusedError(init);
  if (status === 400 && code === "insufficient_funds") {
    return new PaymentsInsufficientFundsError(init);
  }
  if (status === 401 || status === 403) return new PaymentsAuthenticationError(init);
  if (status === 404) return new PaymentsNotFoundError(init);
  // A bare 409 is read as "in flight": retrying with the same key is always safe.
  if (status === 409) return new PaymentsIdempotencyInFlightError(init);
  if (status === 429) {
    return new PaymentsRateLimitError({
      ...init,
      retryAfterMs: parseRetryAfter(answer.retryAfter),
    });
  }
  if (status >= 500) return new PaymentsServerError(init);
  if (status >= 400) return new PaymentsValidationError(init);
  return new PaymentsResponseError({
    ...init,
    message: `${answer.operation}: unexpected HTTP ${status} from the Payments API`,
  });
}

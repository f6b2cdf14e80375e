import { ErrorEnvelope } from "../contract/envelope.js";
import type { Refusal, RefusalKind } from "../provider/adapter.js";
import { cutText } from "../provider/bounds.js";
import type { RawRefusal } from "../provider/refusals.js";
import {
  PaymentsAuthenticationError,
  type PaymentsError,
  PaymentsIdempotencyInFlightError,
  PaymentsIdempotencyKeyReusedError,
  PaymentsInsufficientFundsError,
  PaymentsNotFoundError,
  PaymentsRateLimitError,
  PaymentsRefusedError,
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

/** What a refusal means beyond its status (the profile's rules and the adapter): provider/refusals.ts. */
export type RefusalReader = (refusal: Refusal, raw: RawRefusal) => RefusalKind | undefined;

/**
 * Maps a non-success answer (a 4xx or 5xx, or a 2xx carrying the error envelope) to the error
 * class that says what the caller may do next: the refusal's meaning when `meaningOf` reads
 * one, else its status.
 */
export function toAnswerError(answer: UpstreamAnswer, meaningOf: RefusalReader): PaymentsError {
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
  const meaning = meaningOf(
    {
      operation: answer.operation as Refusal["operation"],
      status,
      code: upstreamCode,
      message: upstreamMessage,
    },
    { code, message: envelope.success ? envelope.data.message : undefined },
  );
  if (meaning === "keyReused") return new PaymentsIdempotencyKeyReusedError(init);
  if (meaning === "inFlight") return new PaymentsIdempotencyInFlightError(init);
  if (meaning === "insufficientFunds") return new PaymentsInsufficientFundsError(init);
  const refused = status >= 200 && status < 300;
  if (meaning === "refused")
    return refused ? new PaymentsRefusedError(init) : new PaymentsValidationError(init);
  return byStatus(answer, init);
}

/** A refusal whose meaning no rule read: what its status says. */
function byStatus(
  answer: UpstreamAnswer,
  init: ConstructorParameters<typeof PaymentsValidationError>[0],
): PaymentsError {
  const { status } = answer;
  if (status >= 200 && status < 300) return new PaymentsRefusedError(init);
  if (status === 401 || status === 403) return new PaymentsAuthenticationError(init);
  if (status === 404) return new PaymentsNotFoundError(init);
  // A 409 no rule reads is "in flight": retrying with the same key is always safe.
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

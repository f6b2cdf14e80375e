import type { ProviderErrorCode } from "../errors/error-codes.js";
import { MoneyqError } from "../errors/moneyq-error.js";

/** Stable codes of the client's errors: match on these (or on the class), never on message text. */
export type PaymentsErrorCode = ProviderErrorCode;

export interface PaymentsErrorInit {
  readonly message: string;
  readonly operation: string;
  readonly status?: number | undefined;
  readonly upstreamCode?: string | undefined;
  readonly body?: unknown;
  readonly requestId?: string | undefined;
  readonly mayHaveReachedServer: boolean;
  readonly cause?: unknown;
}

/** Base of every error the client throws. Carries no request headers, so never the API key. */
export class PaymentsError extends MoneyqError {
  readonly code: PaymentsErrorCode = "server_error";
  /** Operation id from the contract's table, for example `withdrawToBank`. */
  readonly operation: string;
  /** HTTP status, when an answer arrived. */
  readonly status: number | undefined;
  /** The upstream envelope's `code`, when it had one. */
  readonly upstreamCode: string | undefined;
  /** The upstream body as parsed (or its text), with the API key redacted. */
  readonly body: unknown;
  readonly requestId: string | undefined;
  /** False only when the request certainly never reached the server (for example, refused connect). */
  readonly mayHaveReachedServer: boolean;

  constructor(init: PaymentsErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.operation = init.operation;
    this.status = init.status;
    this.upstreamCode = init.upstreamCode;
    this.body = init.body;
    this.requestId = init.requestId;
    this.mayHaveReachedServer = init.mayHaveReachedServer;
  }
}

/** 400 and other definite refusals of the request as sent. */
export class PaymentsValidationError extends PaymentsError {
  override readonly code: "validation_error" | "refused" | "insufficient_funds" =
    "validation_error";
}

/**
 * A 2xx whose body is the spec's error envelope (`success: false`, a `message`): the provider
 * refused the request, however it chose the status.
 */
export class PaymentsRefusedError extends PaymentsValidationError {
  override readonly code = "refused";
}

export class PaymentsInsufficientFundsError extends PaymentsValidationError {
  override readonly code = "insufficient_funds";
}

/** 401 or 403: the key is missing, unknown or of the other environment. */
export class PaymentsAuthenticationError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "authentication_failed";
}

export class PaymentsNotFoundError extends PaymentsError {
  override readonly code = "not_found";
}

/** A conflict on the idempotency key. */
export class PaymentsConflictError extends PaymentsError {}

/** 409: a request with the same key is still being processed; retry later with the same key. */
export class PaymentsIdempotencyInFlightError extends PaymentsConflictError {
  override readonly code: PaymentsErrorCode = "idempotency_in_flight";
}

/** The key was already used with another body: a bug in the caller, never retried. */
export class PaymentsIdempotencyKeyReusedError extends PaymentsConflictError {
  override readonly code = "idempotency_key_reused";
}

/** 429, with the delay the server asked for. */
export class PaymentsRateLimitError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "rate_limited";
  readonly retryAfterMs: number | undefined;
  constructor(init: PaymentsErrorInit & { readonly retryAfterMs: number | undefined }) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 5xx. */
export class PaymentsServerError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "server_error";
}

/** Connect, headers or body timeout. */
export class PaymentsTimeoutError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "timeout";
}

/** Refused, reset or closed connection. */
export class PaymentsConnectionError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "connection_error";
}

/** A 2xx the provider sent, read only as far as it could be: its effect is certain. */
export interface DefiniteAnswer {
  readonly message: string;
  readonly data: unknown;
  /** Why `data` cannot be read (too large, not an object), when it cannot. */
  readonly unreadable?: string | undefined;
}

/** An answer that is not the spec's envelope (not JSON, wrong shape, unexpected status). */
export class PaymentsResponseError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "invalid_response";
  /**
   * Set when the answer was a 2xx saying `success: true` (or too large to tell) in a body that
   * is otherwise not the spec's envelope: the request had its effect and must not be resent.
   */
  readonly definiteAnswer: DefiniteAnswer | undefined;
  constructor(init: PaymentsErrorInit & { readonly definiteAnswer?: DefiniteAnswer }) {
    super(init);
    this.definiteAnswer = init.definiteAnswer;
  }
}

/**
 * The request could not be sent as built (a header or path value no HTTP request can carry).
 * It never left this machine, and sending it again cannot help: never retried.
 */
export class PaymentsInvalidRequestError extends PaymentsError {
  override readonly code = "invalid_request";
  /** The input that cannot be sent, for example `idempotencyKey`. */
  readonly field: string;
  /** What the field must be. */
  readonly rule: string;
  constructor(
    init: Omit<PaymentsErrorInit, "message" | "mayHaveReachedServer"> & {
      readonly field: string;
      readonly rule: string;
    },
  ) {
    super({
      ...init,
      mayHaveReachedServer: false,
      message: `${init.operation}: ${init.field}: ${init.rule} (the request was not sent)`,
    });
    this.field = init.field;
    this.rule = init.rule;
  }
}

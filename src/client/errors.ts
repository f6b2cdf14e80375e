/** Stable codes of the client's errors: match on these (or on the class), never on message text. */
export type PaymentsErrorCode =
  | "validation_error"
  | "insufficient_funds"
  | "authentication_failed"
  | "not_found"
  | "idempotency_in_flight"
  | "idempotency_key_reused"
  | "rate_limited"
  | "server_error"
  | "timeout"
  | "connection_error"
  | "invalid_response";

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
export class PaymentsError extends Error {
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
    this.name = new.target.name;
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
  override readonly code: PaymentsErrorCode = "validation_error";
}

export class PaymentsInsufficientFundsError extends PaymentsValidationError {
  override readonly code: PaymentsErrorCode = "insufficient_funds";
}

/** 401 or 403: the key is missing, unknown or of the other environment. */
export class PaymentsAuthenticationError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "authentication_failed";
}

export class PaymentsNotFoundError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "not_found";
}

/** A conflict on the idempotency key. */
export class PaymentsConflictError extends PaymentsError {}

/** 409: a request with the same key is still being processed; retry later with the same key. */
export class PaymentsIdempotencyInFlightError extends PaymentsConflictError {
  override readonly code: PaymentsErrorCode = "idempotency_in_flight";
}

/** The key was already used with another body: a bug in the caller, never retried. */
export class PaymentsIdempotencyKeyReusedError extends PaymentsConflictError {
  override readonly code: PaymentsErrorCode = "idempotency_key_reused";
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

/** An answer that is not the spec's envelope (not JSON, wrong shape, unexpected status). */
export class PaymentsResponseError extends PaymentsError {
  override readonly code: PaymentsErrorCode = "invalid_response";
}

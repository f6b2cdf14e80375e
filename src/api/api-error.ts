import type { FieldIssue } from "../contract/field-issues.js";
import { API_ERROR_STATUS, type ApiErrorCode } from "./error-statuses.js";

/** An answer of the HTTP API that is not a success; every one has this JSON shape. */
export interface ApiErrorBody {
  readonly error: {
    readonly code: ApiErrorCode;
    readonly message: string;
    /** Field-level problems of the request. */
    readonly details?: readonly FieldIssue[];
    /** Row-level problems of a batch (row, reference, column, rule). */
    readonly rows?: readonly unknown[];
    /** The job a conflict is about (idempotency_key_reused). */
    readonly jobId?: string;
    /** The payments a refused one repeats (payment_repeated), newest first. */
    readonly repeats?: readonly unknown[];
  };
}

/** An error the API answers: its stable code, and the status the code has (error-statuses.ts). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly details: readonly FieldIssue[] | undefined;
  readonly rows: readonly unknown[] | undefined;
  readonly jobId: string | undefined;
  readonly repeats: readonly unknown[] | undefined;
  constructor(
    code: ApiErrorCode,
    message: string,
    extra: {
      details?: readonly FieldIssue[];
      rows?: readonly unknown[];
      jobId?: string;
      repeats?: readonly unknown[];
    } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = API_ERROR_STATUS[code];
    this.code = code;
    this.details = extra.details;
    this.rows = extra.rows;
    this.jobId = extra.jobId;
    this.repeats = extra.repeats;
  }

  body(): ApiErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details && { details: this.details }),
        ...(this.rows && { rows: this.rows }),
        ...(this.jobId && { jobId: this.jobId }),
        ...(this.repeats && { repeats: this.repeats }),
      },
    };
  }
}

export const invalidRequest = (details: readonly FieldIssue[]) =>
  new ApiError(
    "invalid_request",
    `invalid request: ${details.map((d) => (d.field ? `${d.field}: ${d.rule}` : d.rule)).join("; ")}`,
    { details },
  );

export const notFound = (what: string) => new ApiError("not_found", `${what} not found`);

/**
 * A request the framework or Node refused with a 4xx of its own that no code of the table names:
 * `bad_request`, with that status.
 */
export class UnreadableRequestError extends ApiError {
  override readonly status: number;
  constructor(status: number, message: string) {
    super("bad_request", message);
    this.status = status;
  }
}

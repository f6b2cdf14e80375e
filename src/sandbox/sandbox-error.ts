import type { ErrorCode } from "../contract/envelope.js";
import type { FieldIssue } from "../contract/field-issues.js";

/** An answer other than success: status, stable code, message, and field issues when known. */
export class SandboxError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly errors: readonly FieldIssue[] | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    extra: { errors?: readonly FieldIssue[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "SandboxError";
    this.status = status;
    this.code = code;
    this.errors = extra.errors;
    this.headers = extra.headers ?? {};
  }
}

export function fieldError(field: string, rule: string): SandboxError {
  return new SandboxError(400, "validation_error", `${field}: ${rule}`, {
    errors: [{ field, rule }],
  });
}

import { z } from "zod";

/** Spec 2.1 success envelope around an operation's `data`. */
export function successEnvelope<D extends z.ZodType>(data: D) {
  return z.looseObject({ success: z.literal(true), message: z.string(), data });
}

/** Stable error codes carried beside the spec's `message` (decision: contract-decisions.md). */
export const ERROR_CODES = [
  "validation_error",
  "insufficient_funds",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "idempotency_key_reused",
  "idempotency_in_flight",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "internal_error",
  "service_unavailable",
] as const;
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** Spec 2.1 error envelope; `code` and `errors` are optional additions. */
export const ErrorEnvelope = z.looseObject({
  success: z.literal(false),
  message: z.string(),
  code: z.string().optional(),
  errors: z.array(z.object({ field: z.string(), rule: z.string() })).optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

import { z } from "zod";

export const API_KEY_HEADER = "x-api-key";
export const IDEMPOTENCY_HEADER = "idempotencykey";
/** Set on a response that repeats a stored idempotent answer (decision). */
export const REPLAY_HEADER = "idempotent-replayed";
export const REQUEST_ID_HEADER = "x-request-id";
export const RETRY_AFTER_HEADER = "retry-after";

export const IDEMPOTENCY_KEY_MAX = 255;
/** Visible ASCII only (0x21 to 0x7E): a key must always fit in an HTTP header as it is. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;
export const IdempotencyKey = z
  .string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX)
  .regex(IDEMPOTENCY_KEY_PATTERN, {
    message:
      "must be visible ASCII characters only (0x21 to 0x7E: no spaces, controls or non-ASCII)",
  });

/** Spec 4 conventions: every request carries x-api-key; IDEM ones also idempotencykey. */
export const AuthHeaders = z.looseObject({ [API_KEY_HEADER]: z.string().min(1) });
export const IdempotentHeaders = z.looseObject({
  [API_KEY_HEADER]: z.string().min(1),
  [IDEMPOTENCY_HEADER]: IdempotencyKey,
});

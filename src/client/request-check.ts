import { validate } from "../contract/field-issues.js";
import {
  API_KEY_HEADER,
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENCY_KEY_PATTERN,
} from "../contract/headers.js";
import { pathId } from "../contract/primitives.js";
import { PaymentsInvalidRequestError } from "./errors.js";

/** The option or input each header the client sets comes from, for the error that names it. */
export const HEADER_FIELDS: Readonly<Record<string, string>> = {
  [API_KEY_HEADER]: "apiKey",
  [IDEMPOTENCY_HEADER]: "idempotencyKey",
  "user-agent": "userAgent",
};

export const IDEMPOTENCY_KEY_RULE = "must be 1 to 255 visible ASCII characters (0x21 to 0x7E)";

/** What undici accepts in a header value (RFC 9110 field-value); anything else it refuses. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
export const HEADER_VALUE_RULE = "must hold only tab, visible ASCII or Latin-1 characters";

export function isSendableHeaderValue(value: string): boolean {
  return HEADER_VALUE.test(value);
}

/**
 * Refuses, before anything is dispatched, a request that no HTTP request can carry. undici
 * would refuse it too, but only after taking a connection slot that it then never gives back:
 * checked here, such a request costs nothing and says which field is wrong.
 */
export function checkSendable(
  operation: string,
  headers: Readonly<Record<string, string>>,
  fields: Readonly<Record<string, string>>,
): void {
  for (const [header, value] of Object.entries(headers)) {
    if (!HEADER_VALUE.test(value)) {
      throw new PaymentsInvalidRequestError({
        operation,
        field: fields[header] ?? header,
        rule: HEADER_VALUE_RULE,
      });
    }
  }
}

/** The idempotency key's own rule, stricter than a header's. */
export function checkIdempotencyKey(operation: string, key: unknown): void {
  if (
    typeof key !== "string" ||
    key.length > IDEMPOTENCY_KEY_MAX ||
    !IDEMPOTENCY_KEY_PATTERN.test(key)
  ) {
    throw new PaymentsInvalidRequestError({
      operation,
      field: "idempotencyKey",
      rule: IDEMPOTENCY_KEY_RULE,
    });
  }
}

/** A path segment must name one resource: no "/", and never "." or ".." (a step up the path). */
export function checkPathSegment(operation: string, name: string, value: string): void {
  const checked = validate(pathId, value);
  if (!checked.success) {
    throw new PaymentsInvalidRequestError({
      operation,
      field: `params.${name}`,
      rule: checked.issues[0]?.rule ?? "must be a valid path identifier",
    });
  }
}

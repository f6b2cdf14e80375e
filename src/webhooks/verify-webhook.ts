import { DEFAULT_TOLERANCE_SECONDS, verifyMoneyqSignature } from "./moneyq-signature.js";
import {
  checkStandardWebhook,
  type WebhookBody,
  type WebhookCheck,
  type WebhookHeaders,
} from "./standard-signature.js";

export interface VerifyOptions {
  /** Unix seconds; defaults to the clock. */
  readonly now?: number;
  /** How far the delivery's timestamp may be from `now`; 300 by default. */
  readonly toleranceSeconds?: number;
}

/**
 * Checks a delivery as a receiver should, over the raw body as received. Given the request's
 * headers, checks the Standard Webhooks form (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`); given one header's text, checks the earlier `moneyq-signature`
 * (deprecated, sent for one more release). `secret` is a `whsec_` secret or any other of 16
 * characters or more. Throws WebhookSecretError for a secret that cannot verify (an empty
 * one would let anyone sign), WebhookArgumentError for a `now` or tolerance that is not a
 * finite number ≥ 0.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: WebhookBody,
  options?: VerifyOptions,
): boolean;
/** @deprecated Pass the request's headers instead: the Standard Webhooks form. */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  body: WebhookBody,
  now?: number,
  toleranceSeconds?: number,
): boolean;
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders | string | undefined,
  body: WebhookBody,
  nowOrOptions?: number | VerifyOptions,
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  if (headers === undefined || typeof headers === "string") {
    const now = typeof nowOrOptions === "number" ? nowOrOptions : Math.floor(Date.now() / 1000);
    // Bytes as their text; anything else as before (a parsed object never matches).
    const text = body instanceof Uint8Array ? Buffer.from(body).toString("utf8") : String(body);
    return verifyMoneyqSignature(secret, headers, text, now, toleranceSeconds);
  }
  return checkWebhook(secret, headers, body, typeof nowOrOptions === "object" ? nowOrOptions : {})
    .valid;
}

/**
 * verifyWebhook's Standard Webhooks check, saying why a delivery is refused: `missing_header`,
 * `bad_timestamp`, `stale_timestamp`, `no_matching_signature`, or `parsed_body` (the body was
 * handed over parsed, not as received). Throws as verifyWebhook does.
 */
export function checkWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: WebhookBody,
  options: VerifyOptions = {},
): WebhookCheck {
  return checkStandardWebhook(
    secret,
    headers,
    body,
    options.now ?? Math.floor(Date.now() / 1000),
    options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
  );
}

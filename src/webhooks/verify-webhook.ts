import { DEFAULT_TOLERANCE_SECONDS, verifyMoneyqSignature } from "./moneyq-signature.js";
import { verifyStandardWebhook, type WebhookHeaders } from "./standard-signature.js";

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
  body: string,
  options?: VerifyOptions,
): boolean;
/** @deprecated Pass the request's headers instead: the Standard Webhooks form. */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  body: string,
  now?: number,
  toleranceSeconds?: number,
): boolean;
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders | string | undefined,
  body: string,
  nowOrOptions?: number | VerifyOptions,
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  const clock = Math.floor(Date.now() / 1000);
  if (headers === undefined || typeof headers === "string") {
    const now = typeof nowOrOptions === "number" ? nowOrOptions : clock;
    return verifyMoneyqSignature(secret, headers, body, now, toleranceSeconds);
  }
  const options = typeof nowOrOptions === "object" ? nowOrOptions : {};
  return verifyStandardWebhook(
    secret,
    headers,
    body,
    options.now ?? clock,
    options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
  );
}

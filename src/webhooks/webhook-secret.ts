import { Buffer } from "node:buffer";
import { MoneyqError } from "../errors/moneyq-error.js";

/** The form Standard Webhooks gives a secret: this prefix, then the key in base64. */
export const STANDARD_SECRET_PREFIX = "whsec_";
/** The shortest secret of any other form (MONEYQ_WEBHOOK_SECRET's rule). */
export const MIN_SECRET_LENGTH = 16;
/** The key a `whsec_` secret holds: at least as long as the shortest other secret. */
export const MIN_KEY_BYTES = 16;
export const MAX_KEY_BYTES = 64;

/** A webhook secret that cannot sign or verify: empty, too short, or a `whsec_` that is not base64. */
export class WebhookSecretError extends MoneyqError {
  readonly code = "webhook_secret_invalid";

  constructor(rule: string = `a webhook secret must be at least ${MIN_SECRET_LENGTH} characters`) {
    super(rule);
  }
}

/** Why `secret` cannot be used, or undefined when it can. */
export function webhookSecretProblem(secret: unknown): string | undefined {
  if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH)
    return `a webhook secret must be at least ${MIN_SECRET_LENGTH} characters`;
  if (!secret.startsWith(STANDARD_SECRET_PREFIX)) return undefined;
  const encoded = /^([A-Za-z0-9+/]+)={0,2}$/.exec(secret.slice(STANDARD_SECRET_PREFIX.length))?.[1];
  // Unpadded base64 of n bytes has ceil(4n/3) characters: never one more than a multiple of 4.
  const bytes =
    encoded === undefined || encoded.length % 4 === 1 ? 0 : Math.floor((encoded.length * 3) / 4);
  if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES)
    return `a ${STANDARD_SECRET_PREFIX} secret must be ${STANDARD_SECRET_PREFIX} followed by the base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} random bytes`;
  return undefined;
}

/**
 * The HMAC key of the Standard Webhooks signature: a `whsec_` secret's decoded bytes, any
 * other secret's own UTF-8 bytes (the same as `whsec_` followed by its base64).
 */
export function standardKey(secret: string): Buffer {
  const problem = webhookSecretProblem(secret);
  if (problem !== undefined) throw new WebhookSecretError(problem);
  return secret.startsWith(STANDARD_SECRET_PREFIX)
    ? Buffer.from(secret.slice(STANDARD_SECRET_PREFIX.length), "base64")
    : Buffer.from(secret, "utf8");
}

/** The earlier `moneyq-signature`'s key: the secret's text as written, whatever its form. */
export function legacyKey(secret: string): string {
  if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH)
    throw new WebhookSecretError();
  return secret;
}

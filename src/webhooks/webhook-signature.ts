import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "moneyq-signature";
export const EVENT_ID_HEADER = "moneyq-event-id";
/** A signature older than this is refused by verifyWebhook, against replays. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The shortest secret signWebhook and verifyWebhook accept (MONEYQ_WEBHOOK_SECRET's rule). */
export const MIN_SECRET_LENGTH = 16;

/** A webhook secret that is empty or too short to sign or verify with: a setup mistake. */
export class WebhookSecretError extends Error {
  readonly code = "webhook_secret_invalid";

  constructor() {
    super(`a webhook secret must be at least ${MIN_SECRET_LENGTH} characters`);
    this.name = "WebhookSecretError";
  }
}

/** A `now` or tolerance verifyWebhook cannot judge an age with (NaN would accept any age). */
export class WebhookArgumentError extends RangeError {
  readonly code = "webhook_argument_invalid";

  constructor(name: "now" | "toleranceSeconds", value: number) {
    super(`verifyWebhook: ${name} must be a finite number of seconds, 0 or more; got ${value}`);
    this.name = "WebhookArgumentError";
  }
}

function checkSecret(secret: string): void {
  if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH)
    throw new WebhookSecretError();
}

function mac(secret: string, timestamp: number, body: string): Buffer {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest();
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signWebhook(
  secret: string,
  body: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  checkSecret(secret);
  return `t=${timestamp},v1=${mac(secret, timestamp, body).toString("hex")}`;
}

/**
 * Checks a delivery as a receiver should: the signature over the raw body, and its age. The
 * header has one `t` and one or more `v1` values (a sender rotating its secret signs with both);
 * the delivery is genuine when any `v1` is the signature, each written as 64 hex digits. Throws
 * WebhookSecretError for an empty or short secret, which would let anyone sign, and
 * WebhookArgumentError for a `now` or `toleranceSeconds` that is not a finite number ≥ 0.
 */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  body: string,
  now: number = Math.floor(Date.now() / 1000),
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  checkSecret(secret);
  if (!Number.isFinite(now) || now < 0) throw new WebhookArgumentError("now", now);
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0)
    throw new WebhookArgumentError("toleranceSeconds", toleranceSeconds);
  const stamps: string[] = [];
  const signatures: string[] = [];
  for (const part of (header ?? "").split(",")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (name === "t") stamps.push(value);
    else if (name === "v1") signatures.push(value);
  }
  if (stamps.length !== 1 || !/^\d{1,15}$/.test(stamps[0] as string)) return false;
  const timestamp = Number(stamps[0]);
  if (Math.abs(now - timestamp) > toleranceSeconds) return false;
  const expected = mac(secret, timestamp, body);
  let valid = false;
  for (const signature of signatures) {
    if (!/^[0-9a-f]{64}$/i.test(signature)) continue;
    // Every value is compared, so the time taken does not tell which one matched.
    if (timingSafeEqual(Buffer.from(signature, "hex"), expected)) valid = true;
  }
  return valid;
}

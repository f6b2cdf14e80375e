import { createHmac, timingSafeEqual } from "node:crypto";
import type { ErrorCode } from "../errors/error-codes.js";
import { legacyKey } from "./webhook-secret.js";

/**
 * moneyq's own signature header, sent beside the Standard Webhooks headers for one release so
 * that receivers can move to them (docs/upgrading.md).
 */
export const SIGNATURE_HEADER = "moneyq-signature";
export const EVENT_ID_HEADER = "moneyq-event-id";
/** A signature older (or newer) than this is refused by verifyWebhook, against replays. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** A `now` or tolerance verifyWebhook cannot judge an age with (NaN would accept any age). */
// A caller's mistake in the arguments, a RangeError as Node's own are (receivers catch it so);
// its code is in the catalogue all the same.
export class WebhookArgumentError extends RangeError {
  readonly code: ErrorCode = "webhook_argument_invalid";

  constructor(name: "now" | "toleranceSeconds", value: number) {
    super(`verifyWebhook: ${name} must be a finite number of seconds, 0 or more; got ${value}`);
    this.name = "WebhookArgumentError";
  }
}

/** Throws WebhookArgumentError unless `now` and `toleranceSeconds` can judge an age. */
export function checkAgeArguments(now: number, toleranceSeconds: number): void {
  if (!Number.isFinite(now) || now < 0) throw new WebhookArgumentError("now", now);
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0)
    throw new WebhookArgumentError("toleranceSeconds", toleranceSeconds);
}

function mac(secret: string, timestamp: number, body: string): Buffer {
  return createHmac("sha256", legacyKey(secret)).update(`${timestamp}.${body}`).digest();
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one `v1` for each secret. */
export function signWebhook(
  secrets: string | readonly string[],
  body: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  const all = typeof secrets === "string" ? [secrets] : secrets;
  return [
    `t=${timestamp}`,
    ...all.map((s) => `v1=${mac(s, timestamp, body).toString("hex")}`),
  ].join(",");
}

/**
 * Checks the `moneyq-signature` header: one `t` and one or more `v1` values, each 64 hex
 * digits; genuine when any `v1` is the signature of the raw body with `secret` and `t` is
 * within the tolerance.
 */
export function verifyMoneyqSignature(
  secret: string,
  header: string | undefined,
  body: string,
  now: number,
  toleranceSeconds: number,
): boolean {
  legacyKey(secret);
  checkAgeArguments(now, toleranceSeconds);
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

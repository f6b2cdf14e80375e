import { createHmac, timingSafeEqual } from "node:crypto";
import { checkAgeArguments } from "./moneyq-signature.js";
import { standardKey } from "./webhook-secret.js";

/** The Standard Webhooks headers (https://www.standardwebhooks.com). */
export const WEBHOOK_ID_HEADER = "webhook-id";
export const WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp";
export const WEBHOOK_SIGNATURE_HEADER = "webhook-signature";

/**
 * A delivery's headers as a receiver has them: Node's `req.headers`, a plain object (names in
 * any case) or a Fetch `Headers`.
 */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

function mac(key: Buffer, id: string, timestamp: number, body: string): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one for each secret, space-separated. */
export function standardSignature(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets
    .map((secret) => `v1,${mac(standardKey(secret), id, timestamp, body).toString("base64")}`)
    .join(" ");
}

/** The three headers of one delivery, signed with every secret. */
export function standardHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_SIGNATURE_HEADER]: standardSignature(secrets, id, timestamp, body),
  };
}

/** One header's value, whatever the container; a repeated header counts as absent. */
export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function")
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === "string" ? value : undefined;
}

/**
 * Checks a delivery the Standard Webhooks way: the signature covers the id, the timestamp and
 * the raw body, so none can be changed or replayed under another; the timestamp must be
 * within `toleranceSeconds` of `now`. Genuine when any `v1` signature matches.
 */
export function verifyStandardWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string,
  now: number,
  toleranceSeconds: number,
): boolean {
  const key = standardKey(secret);
  checkAgeArguments(now, toleranceSeconds);
  const id = headerValue(headers, WEBHOOK_ID_HEADER);
  const stamp = headerValue(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatures = headerValue(headers, WEBHOOK_SIGNATURE_HEADER);
  if (!id || stamp === undefined || signatures === undefined) return false;
  if (!/^\d{1,15}$/.test(stamp)) return false;
  const timestamp = Number(stamp);
  if (Math.abs(now - timestamp) > toleranceSeconds) return false;
  const expected = mac(key, id, timestamp, body);
  let valid = false;
  for (const entry of signatures.split(" ")) {
    const [version, encoded] = entry.split(",", 2);
    if (version !== "v1" || encoded === undefined || !/^[A-Za-z0-9+/]{43}=$/.test(encoded))
      continue;
    // Every value is compared, so the time taken does not tell which one matched.
    if (timingSafeEqual(Buffer.from(encoded, "base64"), expected)) valid = true;
  }
  return valid;
}

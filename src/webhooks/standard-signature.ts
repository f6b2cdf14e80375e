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

function mac(key: Buffer, id: string, timestamp: number, body: string | Uint8Array): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
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

/** Why a delivery is not genuine. */
export type WebhookFailure =
  | "missing_header"
  | "bad_timestamp"
  | "stale_timestamp"
  | "no_matching_signature"
  | "parsed_body";

/** A delivery judged: genuine, or not and why, in words a receiver's log can hold. */
export type WebhookCheck =
  | { readonly valid: true }
  | { readonly valid: false; readonly reason: WebhookFailure; readonly message: string };

/** The raw body as received: text, or its bytes (a Buffer from a raw-body parser). */
export type WebhookBody = string | Uint8Array;

const failed = (reason: WebhookFailure, message: string): WebhookCheck => ({
  valid: false,
  reason,
  message,
});

/**
 * Checks a delivery the Standard Webhooks way: the signature covers the id, the timestamp and
 * the raw body, so none can be changed or replayed under another; the timestamp must be
 * within `toleranceSeconds` of `now`. Genuine when any `v1` signature matches. A body that is
 * neither text nor bytes (a parsed JSON object) is named as such: its signature cannot match.
 */
export function checkStandardWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: WebhookBody,
  now: number,
  toleranceSeconds: number,
): WebhookCheck {
  const key = standardKey(secret);
  checkAgeArguments(now, toleranceSeconds);
  if (typeof body !== "string" && !(body instanceof Uint8Array))
    return failed(
      "parsed_body",
      "the body must be the raw request body as received (a string or a Buffer), not parsed JSON",
    );
  const id = headerValue(headers, WEBHOOK_ID_HEADER);
  const stamp = headerValue(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatures = headerValue(headers, WEBHOOK_SIGNATURE_HEADER);
  const missing = [
    ...(id ? [] : [WEBHOOK_ID_HEADER]),
    ...(stamp === undefined ? [WEBHOOK_TIMESTAMP_HEADER] : []),
    ...(signatures === undefined ? [WEBHOOK_SIGNATURE_HEADER] : []),
  ];
  if (missing.length > 0) return failed("missing_header", `no ${missing.join(", ")} header`);
  if (!/^\d{1,15}$/.test(stamp as string))
    return failed("bad_timestamp", `${WEBHOOK_TIMESTAMP_HEADER} is not a number of seconds`);
  const timestamp = Number(stamp);
  if (Math.abs(now - timestamp) > toleranceSeconds)
    return failed(
      "stale_timestamp",
      `${WEBHOOK_TIMESTAMP_HEADER} is ${Math.abs(now - timestamp)} s from now, over ${toleranceSeconds} s`,
    );
  return matchesAny(signatures as string, mac(key, id as string, timestamp, body))
    ? { valid: true }
    : failed(
        "no_matching_signature",
        "no v1 signature matches this body with this secret (a body changed or re-encoded, or another secret)",
      );
}

/** Whether any `v1,<base64>` entry is `expected`; every entry is compared, in constant time. */
function matchesAny(signatures: string, expected: Buffer): boolean {
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

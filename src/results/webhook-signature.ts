import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "moneyq-signature";
export const EVENT_ID_HEADER = "moneyq-event-id";
/** A signature older than this is refused by verifyWebhook, against replays. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signWebhook(
  secret: string,
  body: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

/** Checks a delivery as a receiver should: the signature over the raw body, and its age. */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  body: string,
  now: number = Math.floor(Date.now() / 1000),
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  const parts = Object.fromEntries(
    (header ?? "").split(",").map((p) => p.split("=", 2) as [string, string]),
  );
  const timestamp = Number(parts.t);
  if (!Number.isInteger(timestamp) || typeof parts.v1 !== "string") return false;
  if (Math.abs(now - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(
    signWebhook(secret, body, timestamp).split("v1=")[1] as string,
    "hex",
  );
  const given = Buffer.from(parts.v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkWebhook, verifyWebhook } from "../../src/webhooks/verify-webhook.js";

// A Standard Webhooks secret: "whsec_" and the key's bytes in base64.
const KEY = Buffer.from("0123456789abcdef0123456789abcdef");
const SECRET = `whsec_${KEY.toString("base64")}`;
const ID = "msg_2Kx7";
const BODY = '{"type":"job.succeeded","data":{"jobId":"j_1"}}';
const NOW = 1_800_000_000;

/** The signature as the Standard Webhooks specification computes it, here with node:crypto. */
const signed = (body = BODY, t = NOW, key = KEY) =>
  `v1,${createHmac("sha256", key).update(`${ID}.${t}.${body}`).digest("base64")}`;
const headers = (over: Record<string, string | undefined> = {}) => ({
  "webhook-id": ID,
  "webhook-timestamp": String(NOW),
  "webhook-signature": signed(),
  ...over,
});

describe("checkWebhook says why a delivery is refused", () => {
  it("accepts a genuine delivery, as text and as the bytes a raw-body parser gives", () => {
    expect(checkWebhook(SECRET, headers(), BODY, { now: NOW })).toEqual({ valid: true });
    expect(checkWebhook(SECRET, headers(), Buffer.from(BODY), { now: NOW })).toEqual({
      valid: true,
    });
    expect(verifyWebhook(SECRET, headers(), Buffer.from(BODY), { now: NOW })).toBe(true);
  });

  it.each([
    ["no signature header", headers({ "webhook-signature": undefined }), BODY, "missing_header"],
    ["no id header", headers({ "webhook-id": undefined }), BODY, "missing_header"],
    [
      "a timestamp that is no number",
      headers({ "webhook-timestamp": "soon" }),
      BODY,
      "bad_timestamp",
    ],
    [
      "a timestamp 301 s old",
      headers({
        "webhook-timestamp": String(NOW - 301),
        "webhook-signature": signed(BODY, NOW - 301),
      }),
      BODY,
      "stale_timestamp",
    ],
    ["a body changed by one space", headers(), `${BODY} `, "no_matching_signature"],
    [
      "another secret's signature",
      headers({
        "webhook-signature": signed(BODY, NOW, Buffer.from("another key of 32 bytes, exactly")),
      }),
      BODY,
      "no_matching_signature",
    ],
    ["the body parsed as JSON", headers(), JSON.parse(BODY), "parsed_body"],
  ])("%s: %s", (_case, given, body, reason) => {
    const check = checkWebhook(SECRET, given, body, { now: NOW });
    expect(check).toMatchObject({ valid: false, reason });
    expect(verifyWebhook(SECRET, given, body, { now: NOW })).toBe(false);
  });

  it("keeps the one-header form's answer for a parsed body: false, not a throw", () => {
    const legacy = `t=${NOW},v1=${createHmac("sha256", SECRET).update(`${NOW}.${BODY}`).digest("hex")}`;
    expect(verifyWebhook(SECRET, legacy, BODY, NOW)).toBe(true);
    expect(verifyWebhook(SECRET, legacy, Buffer.from(BODY), NOW)).toBe(true);
    expect(verifyWebhook(SECRET, legacy, JSON.parse(BODY), NOW)).toBe(false);
  });

  it("names the missing headers and the age in its message, never the secret", () => {
    const missing = checkWebhook(SECRET, {}, BODY, { now: NOW });
    expect(missing).toMatchObject({
      message: "no webhook-id, webhook-timestamp, webhook-signature header",
    });
    const stale = checkWebhook(
      SECRET,
      headers({
        "webhook-timestamp": String(NOW + 400),
        "webhook-signature": signed(BODY, NOW + 400),
      }),
      BODY,
      { now: NOW },
    );
    expect(stale).toMatchObject({ message: "webhook-timestamp is 400 s from now, over 300 s" });
    const all = JSON.stringify([missing, stale]);
    expect(all).not.toContain(KEY.toString("base64"));
  });
});

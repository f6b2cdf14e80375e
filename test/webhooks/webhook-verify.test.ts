import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signWebhook } from "../../src/webhooks/moneyq-signature.js";
import { verifyWebhook } from "../../src/webhooks/verify-webhook.js";
import { WebhookSecretError } from "../../src/webhooks/webhook-secret.js";

const SECRET = "whsec_current_0123456789";
const OLD_SECRET = "whsec_previous_987654321";
const BODY = '{"jobId":"j_1","result":"succeeded"}';
const NOW = 1_800_000_000;

/** The v1 value for `secret`, computed here with node:crypto, independently of signWebhook. */
const v1 = (secret: string, body = BODY, t = NOW) =>
  createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");

describe("verifyWebhook", () => {
  it("throws on an empty or short secret instead of accepting what anyone can sign", () => {
    const forged = `t=${NOW},v1=${v1("")}`;
    expect(() => verifyWebhook("", forged, BODY, NOW)).toThrow(WebhookSecretError);
    expect(() => verifyWebhook("short", `t=${NOW},v1=${v1("short")}`, BODY, NOW)).toThrow(
      WebhookSecretError,
    );
    expect(() => verifyWebhook("x".repeat(15), forged, BODY, NOW)).toThrow(
      "a webhook secret must be at least 16 characters",
    );
    expect(() => signWebhook("", BODY, NOW)).toThrow(WebhookSecretError);
    expect(verifyWebhook("x".repeat(16), `t=${NOW},v1=${v1("x".repeat(16))}`, BODY, NOW)).toBe(
      true,
    );
  });

  it("accepts a delivery when any of several v1 signatures is valid (secret rotation)", () => {
    const both = `t=${NOW},v1=${v1(OLD_SECRET)},v1=${v1(SECRET)}`;
    const bothReversed = `t=${NOW},v1=${v1(SECRET)},v1=${v1(OLD_SECRET)}`;
    for (const header of [both, bothReversed]) {
      expect(verifyWebhook(SECRET, header, BODY, NOW), header).toBe(true);
      expect(verifyWebhook(OLD_SECRET, header, BODY, NOW), header).toBe(true);
      expect(verifyWebhook("whsec_another_00000000", header, BODY, NOW), header).toBe(false);
      expect(verifyWebhook(SECRET, header, `${BODY} `, NOW), header).toBe(false);
    }
    expect(verifyWebhook(SECRET, `t=${NOW},v1=${"0".repeat(64)},v1=${v1(SECRET)}`, BODY, NOW)).toBe(
      true,
    );
  });

  it("refuses malformed hex and malformed headers", () => {
    const good = v1(SECRET);
    expect(verifyWebhook(SECRET, `t=${NOW},v1=${good}`, BODY, NOW)).toBe(true);
    for (const header of [
      `t=${NOW},v1=${good}zz`,
      `t=${NOW},v1=${good}0`,
      `t=${NOW},v1=${good}00`,
      `t=${NOW},v1=${good.slice(0, 62)}`,
      `t=${NOW},v1=${good.slice(0, 63)}`,
      `t=${NOW},v1=${good.slice(0, 62)}zz`,
      `t=${NOW},v1= ${good.slice(1)}`,
      `t=${NOW},v1=`,
      `t=${NOW}`,
      `v1=${good}`,
      `t=${NOW},t=${NOW + 1},v1=${good}`,
      `t=${NOW}.0,v1=${good}`,
      `t=+${NOW},v1=${good}`,
      `t=${NOW},v1=${good.replace(/^./, "g")}`,
      "",
    ])
      expect(verifyWebhook(SECRET, header, BODY, NOW), header).toBe(false);
  });

  it("still refuses a stale timestamp and a changed one", () => {
    const header = signWebhook(SECRET, BODY, NOW);
    expect(verifyWebhook(SECRET, header, BODY, NOW + 300)).toBe(true);
    expect(verifyWebhook(SECRET, header, BODY, NOW + 301)).toBe(false);
    expect(verifyWebhook(SECRET, header.replace(`t=${NOW}`, `t=${NOW + 1}`), BODY, NOW)).toBe(
      false,
    );
  });
});

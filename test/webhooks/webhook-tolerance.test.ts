import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhook, WebhookArgumentError } from "../../src/index.js";

const SECRET = "whsec_0123456789abcdef";
const BODY = '{"jobId":"j_1"}';
const NOW = 1_800_000_000;

describe("verifyWebhook judges the age only with numbers it can compare", () => {
  it("refuses a tolerance or now that is not a finite number of seconds, 0 or more", () => {
    // Signed a year ago: any real tolerance refuses it; NaN compared as never too old.
    const old = signWebhook(SECRET, BODY, NOW - 365 * 86_400);
    for (const tolerance of [Number.NaN, Number.POSITIVE_INFINITY, -1])
      expect(() => verifyWebhook(SECRET, old, BODY, NOW, tolerance), String(tolerance)).toThrow(
        WebhookArgumentError,
      );
    for (const now of [Number.NaN, Number.NEGATIVE_INFINITY, -5])
      expect(() => verifyWebhook(SECRET, old, BODY, now), String(now)).toThrow(
        /now must be a finite number of seconds/,
      );
    expect(verifyWebhook(SECRET, old, BODY, NOW)).toBe(false);
    const fresh = signWebhook(SECRET, BODY, NOW);
    expect(verifyWebhook(SECRET, fresh, BODY, NOW, 0)).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { decimalForm, decimalTextRule, fiatAmountRule } from "../../src/contract/exact-money.js";
import { freeFormObject } from "../../src/contract/free-form.js";
import type { JobEnvelope } from "../../src/queues/job-envelope.js";
import { requestFingerprint } from "../../src/queues/request-fingerprint.js";

describe("one count of significant digits", () => {
  it("a number and its text have the same digits, so both rules agree", () => {
    for (const text of ["123000", "1234567890123450000", "1.5e3", "100", "1234567890123456"]) {
      const value = Number(text);
      expect(decimalForm(value).digits, text).toBe(
        text
          .replace(/[eE].*$/, "")
          .replace(".", "")
          .replace(/^0+/, "")
          .replace(/0+$/, "").length,
      );
      expect(fiatAmountRule(value) === undefined, text).toBe(decimalTextRule(text) === undefined);
    }
    expect(decimalForm(0.30000000000000004)).toEqual({ digits: 17, decimals: 17 });
    expect(decimalForm(1e-9)).toEqual({ digits: 1, decimals: 9 });
  });
});

describe("free-form size", () => {
  it("is measured in UTF-8 bytes, not characters", () => {
    const schema = freeFormObject(100);
    // 45 characters of "é": 56 characters of JSON, 101 bytes.
    const wide = { note: "é".repeat(45) };
    expect(JSON.stringify(wide).length).toBeLessThan(100);
    const refused = schema.safeParse(wide);
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe("at most 100 bytes as JSON");
    expect(schema.safeParse({ note: "e".repeat(45) }).success).toBe(true);
  });
});

describe("the request fingerprint", () => {
  const stable = (amount: string, metadata?: Record<string, unknown>) =>
    ({
      kind: "payout.stable",
      account: "alpha",
      idempotencyKey: "k-1",
      request: {
        params: { subAccountId: "sub_1" },
        body: { amount, toAddress: "0xabc", network: "ETH", currency: "USDT" },
      },
      ...(metadata && { metadata }),
    }) as unknown as JobEnvelope;

  it("reads a stable amount as a number: 1.5, 1.50 and 01.500 are one request, 1.05 another", () => {
    const fp = requestFingerprint(stable("1.5"));
    expect(requestFingerprint(stable("1.50"))).toBe(fp);
    expect(requestFingerprint(stable("01.500"))).toBe(fp);
    expect(requestFingerprint(stable("2.0"))).toBe(requestFingerprint(stable("2")));
    expect(requestFingerprint(stable("1.05"))).not.toBe(fp);
    // Only money fields: the caller's metadata is compared as written.
    expect(requestFingerprint(stable("1.5", { amount: "1.50" }))).not.toBe(
      requestFingerprint(stable("1.5", { amount: "1.5" })),
    );
  });
});

import { describe, expect, it } from "vitest";
import { beneficiaryOf } from "../../src/outflow/beneficiary.js";
import { isOutflow, outflowCheckOf } from "../../src/outflow/outflow-check.js";
import { amountUnits, DAY_MS, HOUR_MS } from "../../src/outflow/velocity-limits.js";
import type { JobEnvelope } from "../../src/queues/job-envelope.js";
import { BANK_PAYOUT_BODY } from "../fixtures/batches.js";

const bank = (body: Record<string, unknown>): JobEnvelope =>
  ({
    kind: "payout.bank",
    account: "alpha",
    idempotencyKey: "k1",
    request: { body: { ...BANK_PAYOUT_BODY, ...body } },
  }) as JobEnvelope;

describe("amounts in whole units", () => {
  it.each([
    ["100", 1_000_000],
    ["100.5", 1_005_000],
    ["0.0001", 1],
    ["0.00011", 2],
    ["0.00010", 1],
    ["10000", 100_000_000],
    ["1000000000", 10_000_000_000_000],
    ["99999999999999999999.5", Number.MAX_SAFE_INTEGER],
  ])(
    "%s is %d units, finer digits rounding up, past 900 billion counted as that",
    (text, units) => {
      expect(amountUnits(text)).toBe(units);
    },
  );
});

describe("a payout's beneficiary", () => {
  it("is the same for the same bank account however it is written, and never the data itself", () => {
    const a = beneficiaryOf("payout.bank", {
      body: { bankCode: "044", accountNumber: "0123456789" },
    });
    const b = beneficiaryOf("payout.bank", {
      body: { bankCode: " 044", accountNumber: "0123456789 " },
    });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{24}$/);
    expect(a).not.toContain("0123456789");
    expect(
      beneficiaryOf("payout.bank", { body: { bankCode: "058", accountNumber: "0123456789" } }),
    ).not.toBe(a);
  });

  it("is a phone number and network for mobile money, an address on its network for stable withdrawals, none for other kinds", () => {
    const phone = (number: string) =>
      beneficiaryOf("payout.momo", { body: { phoneNumber: number, network: "MTN" } });
    expect(phone("+254 700-000001")).toBe(phone("254700000001"));
    expect(phone("254700000001")).toMatch(/^[0-9a-f]{24}$/);
    const addr = (address: string, network: string) =>
      beneficiaryOf("payout.stable", { body: { network, toAddress: address } });
    expect(addr("TXyz", "TRON")).toBe(addr(" TXyz", "tron"));
    // An address may be case-sensitive: another case is another beneficiary.
    expect(addr("TXyz", "TRON")).not.toBe(addr("txyz", "TRON"));
    expect(beneficiaryOf("funding.wallet", { body: { amount: 1 } })).toBeUndefined();
    expect(beneficiaryOf("payout.bank", { body: { bankCode: "044" } })).toBeUndefined();
  });
});

describe("the outflow check of a job", () => {
  const velocity = new Map([
    [
      "alpha",
      new Map([
        [
          "NGN",
          {
            perHour: { amount: "10000" },
            perBeneficiaryPerDay: { count: 3 },
          },
        ],
      ]),
    ],
  ]);

  it("names its currency, units and every limit of its account and currency", () => {
    const check = outflowCheckOf(bank({ amount: 100 }), "j_1", velocity);
    expect(check).toEqual({
      jobId: "j_1",
      currency: "NGN",
      units: 1_000_000,
      limits: [
        { scope: "currency", windowMs: HOUR_MS, maxUnits: 100_000_000, maxCount: -1 },
        {
          scope: "beneficiary",
          windowMs: DAY_MS,
          maxUnits: -1,
          maxCount: 3,
          beneficiary: beneficiaryOf("payout.bank", { body: BANK_PAYOUT_BODY }),
        },
      ],
    });
  });

  it("has no limits in another currency or account, but still checks the lane", () => {
    expect(outflowCheckOf(bank({ currency: "KES" }), "j_1", velocity)?.limits).toEqual([]);
    expect(
      outflowCheckOf({ ...bank({}), account: "beta" } as JobEnvelope, "j_1", velocity)?.limits,
    ).toEqual([]);
  });

  it("is none for a kind that sends no money out", () => {
    expect(isOutflow("payout.bank")).toBe(true);
    expect(isOutflow("funding.wallet")).toBe(false);
    expect(isOutflow("exchange.order")).toBe(false);
    const funding = { ...bank({}), kind: "funding.wallet" } as JobEnvelope;
    expect(outflowCheckOf(funding, "j_1", velocity)).toBeUndefined();
  });
});

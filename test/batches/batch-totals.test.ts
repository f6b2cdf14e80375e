import { describe, expect, it } from "vitest";
import { approvalNeeded } from "../../src/batches/approval-policy.js";
import { requestedTotalFields, totalsOf } from "../../src/batches/batch-totals.js";
import { compareDecimal, decimalText, rowMoney } from "../../src/queues/job-money.js";

describe("batch totals", () => {
  it("adds up a batch of 200,000 rows exactly (too many to spread into one call)", () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => ({
      currency: i % 2 === 0 ? "NGN" : "KES",
      amount: i === 1 ? "0.001" : "1.5",
    }));
    const totals = totalsOf(requestedTotalFields(rows));
    expect(totals.NGN?.requested).toEqual({ rows: 100_000, amount: "150000.0" });
    expect(totals.KES?.requested).toEqual({ rows: 100_000, amount: "149998.501" });
  });

  it.each([
    [1500, "1500"],
    [0.1, "0.1"],
    [1e-7, "0.0000001"],
    [1e21, "1000000000000000000000"],
    ["25.50", "25.5"],
    ["007.10", "7.1"],
    [-1, undefined],
    ["1,5", undefined],
    [Number.NaN, undefined],
  ])("writes %s as the decimal text %s", (value, text) => {
    expect(decimalText(value)).toBe(text);
  });

  it("reads a row's money from its body, only with a currency code", () => {
    expect(rowMoney({ body: { amount: 100.5, currency: "NGN" } })).toEqual({
      currency: "NGN",
      amount: "100.5",
    });
    expect(rowMoney({ body: { amount: 100 } })).toBeUndefined();
    expect(rowMoney({ body: { amount: 100, currency: "ngn" } })).toBeUndefined();
    expect(rowMoney(undefined)).toBeUndefined();
  });

  it("adds amounts exactly, at the currency's largest scale", () => {
    const fields = requestedTotalFields([
      { currency: "USD", amount: "0.1" },
      { currency: "USD", amount: "0.2" },
      { currency: "USD", amount: "1000000000000.05" },
      { currency: "KES", amount: "3" },
    ]);
    const totals = totalsOf(fields);
    expect(totals.USD?.requested).toEqual({ rows: 3, amount: "1000000000000.35" });
    expect(totals.USD?.pending).toEqual(totals.USD?.requested);
    expect(totals.USD?.succeeded).toEqual({ rows: 0, amount: "0.00" });
    expect(totals.KES?.requested).toEqual({ rows: 1, amount: "3" });
  });

  it("compares decimal texts exactly", () => {
    expect(compareDecimal("1000.01", "1000")).toBe(1);
    expect(compareDecimal("1000.00", "1000")).toBe(0);
    expect(compareDecimal("999.999", "1000")).toBe(-1);
  });

  it("asks for approval per the account's policy", () => {
    const totals = totalsOf(requestedTotalFields([{ currency: "NGN", amount: "1000.01" }]));
    const over = {
      allBatches: false,
      batchesOver: { NGN: "1000" },
      jobsOver: {},
      expiresAfterMs: undefined,
    };
    expect(approvalNeeded(over, totals)).toEqual({ expiresAfterMs: undefined });
    expect(approvalNeeded({ ...over, batchesOver: { NGN: "1000.01" } }, totals)).toBeUndefined();
    expect(approvalNeeded({ ...over, batchesOver: { USD: "1" } }, totals)).toBeUndefined();
    expect(
      approvalNeeded(
        { allBatches: true, batchesOver: {}, jobsOver: {}, expiresAfterMs: 5_000 },
        totals,
      ),
    ).toEqual({ expiresAfterMs: 5_000 });
    expect(approvalNeeded(undefined, totals)).toBeUndefined();
  });
});

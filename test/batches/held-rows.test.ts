import { describe, expect, it } from "vitest";
import { HeldRows } from "../../src/batches/held-rows.js";

describe("HeldRows", () => {
  it("gives back each row's number, reference and a fresh copy of its value", () => {
    const held = new HeldRows<{ amount: number; name: string; nested: { ok: boolean } }>();
    const value = { amount: 100.25, name: "Adá Òbí ₦", nested: { ok: true } };
    expect(held.add(7, "pay-7", value)).toBe(0);
    expect(held.add(9, "pay-9", { ...value, amount: 5 })).toBe(1);
    expect(held.length).toBe(2);
    expect([held.row(0), held.reference(0), held.value(0)]).toEqual([7, "pay-7", value]);
    expect(held.value(1).amount).toBe(5);
    const copy = held.value(0);
    copy.nested.ok = false;
    expect(held.value(0).nested.ok).toBe(true);
  });

  it("keeps every value intact across slab boundaries and for values larger than a slab", () => {
    const held = new HeldRows<{ i: number; text: string }>();
    // About 12 MB in rows of varied length (multi-byte characters included): several 4 MB slabs.
    const values = Array.from({ length: 30_000 }, (_, i) => ({
      i,
      text: "é".repeat(i % 300) + "x".repeat((i * 7) % 101),
    }));
    for (const v of values) held.add(v.i + 1, `r${v.i}`, v);
    const big = { i: -1, text: "z".repeat(5 * 1024 * 1024) };
    held.add(0, "big", big);
    held.add(1, "after", { i: -2, text: "small" });
    for (const [index, v] of values.entries()) expect(held.value(index)).toEqual(v);
    expect(held.value(values.length)).toEqual(big);
    expect(held.value(values.length + 1)).toEqual({ i: -2, text: "small" });
  });

  it("refuses an index it does not hold", () => {
    const held = new HeldRows<number>();
    held.add(1, "a", 1);
    expect(() => held.value(1)).toThrow(RangeError);
    expect(() => held.reference(-1)).toThrow(RangeError);
  });
});

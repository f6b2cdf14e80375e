import { describe, expect, it } from "vitest";
import { Coalescer } from "../../src/redis/coalescer.js";

/** A run whose calls are recorded and finished by hand. */
function heldRun() {
  const calls: { items: readonly number[]; finish: (error?: Error) => void }[] = [];
  const run = (items: readonly number[]) =>
    new Promise<number[]>((resolve, reject) => {
      calls.push({
        items,
        finish: (error) => (error ? reject(error) : resolve(items.map((n) => n * 10))),
      });
    });
  return { calls, run };
}

describe("Coalescer", () => {
  it("sends a lone call at once and gathers the calls made while it runs into one", async () => {
    const { calls, run } = heldRun();
    const c = new Coalescer(run, 100);
    const first = c.add(1);
    expect(calls.map((x) => x.items)).toEqual([[1]]);
    const rest = [c.add(2), c.add(3), c.add(4)];
    expect(calls).toHaveLength(1);
    calls[0]?.finish();
    expect(await first).toBe(10);
    await new Promise((r) => setImmediate(r));
    expect(calls.map((x) => x.items)).toEqual([[1], [2, 3, 4]]);
    calls[1]?.finish();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
  });

  it("takes at most maxItems a call, in the order they came", async () => {
    const { calls, run } = heldRun();
    const c = new Coalescer(run, 2);
    const all = [1, 2, 3, 4, 5].map((n) => c.add(n));
    for (let i = 0; i < 3; i += 1) {
      await new Promise((r) => setImmediate(r));
      calls[i]?.finish();
    }
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(calls.map((x) => x.items)).toEqual([[1], [2, 3], [4, 5]]);
  });

  it("with more than one in flight, sends each call at once until that many run, then gathers", async () => {
    const { calls, run } = heldRun();
    const c = new Coalescer(run, 100, 2);
    const first = [c.add(1), c.add(2)];
    expect(calls.map((x) => x.items)).toEqual([[1], [2]]);
    const rest = [c.add(3), c.add(4)];
    expect(calls).toHaveLength(2);
    calls[1]?.finish();
    await new Promise((r) => setImmediate(r));
    expect(calls.map((x) => x.items)).toEqual([[1], [2], [3, 4]]);
    calls[0]?.finish();
    calls[2]?.finish();
    expect(await Promise.all([...first, ...rest])).toEqual([10, 20, 30, 40]);
  });

  it("rejects every call of a failed run, and goes on with the next", async () => {
    const { calls, run } = heldRun();
    const c = new Coalescer(run, 10);
    const first = c.add(1);
    const second = [c.add(2), c.add(3)];
    calls[0]?.finish(new Error("down"));
    await expect(first).rejects.toThrow("down");
    await new Promise((r) => setImmediate(r));
    calls[1]?.finish(new Error("still down"));
    for (const p of second) await expect(p).rejects.toThrow("still down");
    const third = c.add(4);
    await new Promise((r) => setImmediate(r));
    calls[2]?.finish();
    expect(await third).toBe(40);
  });

  it("turns a run that throws at once into rejections", async () => {
    const c = new Coalescer<number, number>(() => {
      throw new Error("bad input");
    }, 10);
    await expect(c.add(1)).rejects.toThrow("bad input");
    await expect(c.add(2)).rejects.toThrow("bad input");
  });
});

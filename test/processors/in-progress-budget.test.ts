import { Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { InProgressBudget } from "../../src/processors/in-progress-budget.js";
import { useTestRedis } from "../helpers/redis.js";

const redis = useTestRedis("budget");
const workers: Worker[] = [];

/** A real worker that fetches nothing (autorun off): the budget only sets its concurrency. */
function workerOf(account: string): Worker {
  const worker = new Worker(`payments-${account}`, null, {
    connection: redis.connect(),
    prefix: redis.prefix,
    autorun: false,
  });
  workers.push(worker);
  return worker;
}

/** A run that lasts until `end` is called. */
function holding(budget: InProgressBudget, account: string) {
  let end: () => void = () => undefined;
  const done = budget.run(account, () => new Promise<void>((resolve) => (end = resolve)));
  return {
    end: () => {
      end();
      return done;
    },
  };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i += 1) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
};

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
});

describe("the budget of jobs in progress", () => {
  it("is shared among the busy accounts, never above an account's own concurrency", async () => {
    const budget = new InProgressBudget(12);
    const [a, b, c] = [workerOf("a"), workerOf("b"), workerOf("c")];
    budget.add("a", a, 16);
    budget.add("b", b, 16);
    budget.add("c", c, 4);
    // Nobody busy: a newly busy account may take the whole budget, up to its own.
    expect([a.concurrency, b.concurrency, c.concurrency]).toEqual([12, 12, 4]);

    const runA = holding(budget, "a");
    const runB = holding(budget, "b");
    // Two busy: six each at once, so the process does not hold more than the budget.
    expect([a.concurrency, b.concurrency, c.concurrency]).toEqual([6, 6, 4]);
    const runC = holding(budget, "c");
    expect([a.concurrency, b.concurrency, c.concurrency]).toEqual([4, 4, 4]);

    await runA.end();
    await runC.end();
    // Fewer busy: the shares grow back, a moment later.
    await until(() => b.concurrency === 12);
    expect([a.concurrency, c.concurrency]).toEqual([12, 4]);
    await runB.end();
    budget.close();
  });

  it("leaves every busy account at least one job, however many are busy", async () => {
    const budget = new InProgressBudget(2);
    const aliases = ["p", "q", "r", "s", "t"];
    const own = aliases.map((alias) => {
      const worker = workerOf(alias);
      budget.add(alias, worker, 16);
      return worker;
    });
    const runs = aliases.map((alias) => holding(budget, alias));
    expect(own.map((w) => w.concurrency)).toEqual([1, 1, 1, 1, 1]);
    // A job of one account runs while all five are busy.
    expect(await budget.run("p", async () => "ran")).toBe("ran");
    await Promise.all(runs.map((r) => r.end()));
    await until(() => own.every((w) => w.concurrency === 2));
    budget.close();
  });

  it("admits a fetched job only within the account's share, and always an account's first", async () => {
    const budget = new InProgressBudget(4);
    const [m, n] = [workerOf("m"), workerOf("n")];
    budget.add("m", m, 16);
    budget.add("n", n, 16);
    // m alone is busy: its share is the whole budget.
    const mRuns = [1, 2, 3].map(() => holding(budget, "m"));
    expect(budget.admits("m")).toBe(true);
    // n's first job always fits; then the share is 2 each, and m holds 3: its next is shed.
    expect(budget.admits("n")).toBe(true);
    const nRun = holding(budget, "n");
    expect(budget.admits("m")).toBe(false);
    expect(budget.admits("n")).toBe(true);
    await mRuns[0]?.end();
    await mRuns[1]?.end();
    expect(budget.admits("m")).toBe(true);
    await Promise.all([mRuns[2]?.end(), nRun.end()]);
    budget.close();
  });

  it("ends a run's count when its job throws", async () => {
    const budget = new InProgressBudget(8);
    const [x, y] = [workerOf("x"), workerOf("y")];
    budget.add("x", x, 16);
    budget.add("y", y, 16);
    const runY = holding(budget, "y");
    await expect(
      budget.run("x", async () => {
        expect(x.concurrency).toBe(4);
        throw new Error("failed");
      }),
    ).rejects.toThrow("failed");
    await until(() => y.concurrency === 8);
    await runY.end();
    budget.close();
  });
});

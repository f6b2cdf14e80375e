import { describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitFor } from "../helpers/wait-until.js";

const KEY = "sk_sandbox_many_accounts_0001";
const ACCOUNTS = Array.from({ length: 12 }, (_, i) => `m${i}`);
const ROWS = 10;
const BUDGET = ACCOUNTS.length;

const p = usePipeline(
  {
    MONEYQ_ACCOUNTS: JSON.stringify(
      ACCOUNTS.map((alias) => ({ alias, apiKey: KEY, ratePerSecond: 5 })),
    ),
    MONEYQ_CONCURRENCY: "16",
    MONEYQ_MAX_JOBS_IN_PROGRESS: String(BUDGET),
  },
  { settleDelayMs: 20, sandboxAccounts: [{ accountId: "acct_many", apiKey: KEY }] },
);

/** Jobs active in every account's queue, summed. */
async function activeJobs(): Promise<number> {
  const queues = [...p.workers().queues.values()];
  const counts = await Promise.all(queues.map((q) => q.getActiveCount()));
  return counts.reduce((sum, n) => sum + n, 0);
}

describe("many busy accounts in one process", () => {
  it("hold the process's budget of jobs in progress between them, and every job ends once", async () => {
    const inputs: JobInput[] = ACCOUNTS.flatMap((account) =>
      Array.from({ length: ROWS }, (_, i) => bankPayout("many", `r${i}`, account)),
    );
    await p.producer().enqueueMany(inputs);
    // BullMQ fetches up to a worker's concurrency before it runs any of those jobs, so the
    // first wave may show more active jobs for a moment: those over the share are handed back
    // before they ask for a slot. Counted from when every account has a result.
    await waitFor(
      p.results,
      (found) => new Set(found.map((r) => r.account)).size === ACCOUNTS.length,
      30_000,
      "a result of every account",
    );
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, await activeJobs());
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const results = await p.waitForResults(inputs.length, 60_000);
    sampling = false;
    await sampler;

    expect(results.map((r) => r.result)).toEqual(Array(inputs.length).fill("succeeded"));
    expect(new Set(results.map((r) => r.jobId)).size).toBe(inputs.length);
    // Each busy account holds one job (the budget over 12 accounts), and may have the next
    // one fetched as it finishes; without the budget each would hold all its rows left.
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BUDGET + ACCOUNTS.length);
    // Every account kept moving: each had a result within the first half of all results.
    const firstHalf = new Set(results.slice(0, inputs.length / 2).map((r) => r.account));
    expect(firstHalf).toEqual(new Set(ACCOUNTS));
  });
});

import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { turnLeaseMs } from "../../src/processors/account-turns.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { turnKeys } from "../../src/redis/keys.js";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitFor } from "../helpers/wait-until.js";

const KEY = "sk_sandbox_account_turns_0001";
const ACCOUNTS = Array.from({ length: 12 }, (_, i) => `t${i}`);
const AT_ONCE = 3;
const ROWS = 4;

const p = usePipeline(
  {
    MONEYQ_ACCOUNTS: JSON.stringify(
      ACCOUNTS.map((alias) => ({ alias, apiKey: KEY, ratePerSecond: 10 })),
    ),
    MONEYQ_MAX_ACTIVE_ACCOUNTS: String(AT_ONCE),
  },
  { settleDelayMs: 20, sandboxAccounts: [{ accountId: "acct_turns", apiKey: KEY }] },
);

/** Samples how many workers the process runs until `until` settles; answers the most seen. */
async function mostWorkersWhile(until: Promise<unknown>): Promise<number> {
  let most = 0;
  let sampling = true;
  until.finally(() => {
    sampling = false;
  });
  while (sampling) {
    most = Math.max(most, p.workers().workers.size);
    await new Promise((r) => setTimeout(r, 10));
  }
  return most;
}

describe("a turn's lease", () => {
  it("is the job lock's duration, within 2 and 15 seconds", () => {
    const leases = [500, 2_000, 8_000, 15_000, 30_000].map(turnLeaseMs);
    expect(leases).toEqual([2_000, 2_000, 8_000, 15_000, 15_000]);
  });
});

describe("accounts take turns", () => {
  it("no worker runs for an account without work", async () => {
    // Past a few ticks of the turns: still none.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(p.workers().workers.size).toBe(0);
  });

  it("serve every account, at most MONEYQ_MAX_ACTIVE_ACCOUNTS at once, each job once, then let the workers go", async () => {
    const inputs: JobInput[] = ACCOUNTS.flatMap((account) =>
      Array.from({ length: ROWS }, (_, i) => bankPayout("turns", `r${i}`, account)),
    );
    await p.producer().enqueueMany(inputs);
    const done = p.waitForResults(inputs.length, 60_000);
    const most = await mostWorkersWhile(done);
    const results = await done;

    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(AT_ONCE);
    expect(results.map((r) => r.result)).toEqual(Array(inputs.length).fill("succeeded"));
    expect(new Set(results.map((r) => r.jobId)).size).toBe(inputs.length);
    expect(new Set(results.map((r) => r.account))).toEqual(new Set(ACCOUNTS));
    const requests = (
      await p.sb.control("GET", "/requests", { query: { accountId: "acct_turns" } })
    ).body.data.requests as { method: string; idempotencyKey?: string }[];
    const posts = requests.filter((r) => r.method === "POST");
    expect(posts).toHaveLength(inputs.length);
    expect(new Set(posts.map((r) => r.idempotencyKey)).size).toBe(inputs.length);
    // Idle accounts give their turns up: the worker closes first, the turn is ended after.
    await waitFor(
      () => p.workers().workers.size,
      (n) => n === 0,
      20_000,
      "every worker let go",
    );
    await waitFor(
      () => p.connection().zcard(turnKeys(p.config().redisPrefix).held),
      (n) => n === 0,
      5_000,
      "every turn given up",
    );
  });

  it("serve work nobody rang for, found in the account's queue", async () => {
    const input = bankPayout("turns-unrung", "r0", "t5");
    const queue = new Queue(accountQueueName(p.space(), "t5"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    const envelope = p.producer().envelopeOf(input);
    const jobId = p.producer().jobIdOf(input);
    await queue.add(envelope.kind, { envelope }, { jobId });
    await queue.close();
    expect((await p.resultOf(jobId, 20_000)).result).toBe("succeeded");
  });

  it("take the turn of an account whose holder stopped renewing once its lease ends", async () => {
    const { held } = turnKeys(p.config().redisPrefix);
    const leaseEnd = Date.now() + 2_000;
    // A process that held t7 and died: its lease runs out by itself.
    await p.connection().zadd(held, leaseEnd, "t7");
    const job = await p.producer().enqueue(bankPayout("turns-lapsed", "r0", "t7"));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(p.workers().workers.has("t7")).toBe(false);
    const result = await p.resultOf(job.jobId, 20_000);
    expect(result.result).toBe("succeeded");
    expect(Date.parse(result.finishedAt)).toBeGreaterThanOrEqual(leaseEnd);
  });
});

import { Job, Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { DeadLetters } from "../../src/queues/dead-letters.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { LANE_PRIORITY } from "../../src/queues/lanes.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { ReplayConflictError } from "../../src/queues/replay-conflict-error.js";
import { usePipeline } from "../helpers/pipeline.js";

// Replays of kinds without an idempotency key, and the lane a replay goes back to.
const p = usePipeline({ MONEYQ_MAX_ATTEMPTS: "2" });

const walletRequests = async (accountId: string): Promise<number> =>
  (await p.sb.control("GET", "/requests", { query: { accountId } })).body.data.requests.filter(
    (r: { path: string }) => r.path.endsWith("/wallet"),
  ).length;

const letters = () => new DeadLetters(p.connection(), p.config().redisPrefix, p.workers().results);

const jobOf = async (jobId: string): Promise<Job> => {
  const queue = new Queue(accountQueueName(p.space(), "default"), {
    connection: p.connection(),
    prefix: p.config().redisPrefix,
  });
  try {
    return (await Job.fromId(queue, jobId)) as Job;
  } finally {
    await queue.close();
  }
};

describe("replaying a job of a kind without an idempotency key", () => {
  it("after a definite refusal (nothing created): sent again, in the lane it was enqueued in", async () => {
    const accountId = (await p.sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
    // The account has an NGN wallet already: the provider refuses a second one (a 4xx).
    const job: JobInput = {
      kind: "wallet.create",
      account: "default",
      idempotencyKey: "replay-refused-wallet",
      request: { body: { currency: "NGN" } },
    };
    const before = await walletRequests(accountId);
    // Enqueued as a batch would: the bulk lane.
    const [enqueued] = await p.producer().enqueueMany([job]);
    const jobId = enqueued?.jobId as string;
    const first = await p.resultOf(jobId);
    expect(["failed", "rejected"]).toContain(first.result);
    expect(await walletRequests(accountId)).toBe(before + 1);

    // As if it had been moved to the lookup lane before it ended (moveLater does that).
    await (await jobOf(jobId)).changePriority({ priority: LANE_PRIORITY.lookup });
    expect(await letters().replay("default", jobId)).toBe(true);
    const again = await p.resultOf(jobId, 20_000, 1);
    // Sent again (refused again), not stopped as "sent before".
    expect(again.result).toBe(first.result);
    expect(again.code).not.toBe("outcome_unknown");
    expect(await walletRequests(accountId)).toBe(before + 2);
    const replayed = await jobOf(jobId);
    expect(replayed.priority).toBe(LANE_PRIORITY.bulk);
    expect(replayed.data.envelope.priority).toBe("bulk");
  });

  it("after a request that may have had its effect: the replay is refused, nothing resent", async () => {
    const accountId = (await p.sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
    await p.sb.control("PUT", `/accounts/${accountId}/faults`, { body: { errorRate: 1 } });
    try {
      const { jobId } = await p.producer().enqueue({
        kind: "wallet.create",
        account: "default",
        idempotencyKey: "replay-unknown-wallet",
        request: { body: { currency: "ZAR" } },
      });
      const first = await p.resultOf(jobId, 20_000);
      expect(first).toMatchObject({ result: "needs_reconciliation" });
      const sent = await walletRequests(accountId);
      const refusal = await letters()
        .replay("default", jobId)
        .catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(ReplayConflictError);
      expect((refusal as Error).message).toMatch(/reconcile it with the provider/);
      await new Promise((r) => setTimeout(r, 300));
      expect(await walletRequests(accountId)).toBe(sent);
      expect(await (await jobOf(jobId)).getState()).toBe("failed");
    } finally {
      await p.sb.control("DELETE", `/accounts/${accountId}/faults`);
    }
  });
});

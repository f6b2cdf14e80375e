import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { LANE_PRIORITY } from "../../src/queues/lanes.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { laneUnlanedJobs } from "../../src/queues/unlaned-jobs.js";
import { bullKeys } from "../../src/redis/bullmq-internals.js";
import { lanePassKey } from "../../src/redis/keys.js";
import { payoutBatch } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";

// A backlog an earlier release queued without priorities (BullMQ's wait list, fetched before
// every lane) is moved into its lanes when workers start.
const p = usePipeline(
  { MONEYQ_RATE_LIMIT_PER_SECOND: "20", MONEYQ_CONCURRENCY: "2" },
  { startWorkers: false },
);

describe("jobs queued by a release before lanes", () => {
  it("are moved into their lanes at worker start: an urgent job does not wait behind them", async () => {
    const accountId = (await p.sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
    const queue = new Queue(accountQueueName(p.space(), "default"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    // The old way: Queue.add without a priority, batch rows.
    const rows = payoutBatch("before-lanes", 40);
    for (const input of rows) {
      const envelope = p.producer().envelopeOf(input);
      await queue.add(envelope.kind, { envelope }, { jobId: p.producer().jobIdOf(input) });
    }
    const urgent = await p.producer().enqueue({
      ...(payoutBatch("after-lanes", 1)[0] as JobInput),
      idempotencyKey: "urgent-after-backlog",
    });

    await p.startMoreWorkers();
    await p.resultOf(urgent.jobId, 20_000);
    const requests = (await p.sb.control("GET", "/requests", { query: { accountId } })).body.data
      .requests as { method: string; idempotencyKey?: string }[];
    const submissions = requests.filter((r) => r.method === "POST");
    const at = submissions.findIndex((r) => r.idempotencyKey === "urgent-after-backlog");
    expect(at).toBeGreaterThanOrEqual(0);
    // Only requests already under way when it was fetched go before it (concurrency 2).
    expect(at).toBeLessThanOrEqual(3);
    const row = await queue.getJob(p.producer().jobIdOf(rows[39] as JobInput));
    expect(row?.priority).toBe(LANE_PRIORITY.bulk);
    await p.waitForResults(41, 30_000);
    await queue.close();
  });

  it("are moved from the paused lists and the delayed set too: a confirmation to the lookup lane, rows to bulk", async () => {
    const queue = new Queue(accountQueueName(p.space(), "default"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    try {
      const add = async (input: JobInput, data: object, delay?: number) => {
        const envelope = p.producer().envelopeOf(input);
        const jobId = p.producer().jobIdOf(input);
        await queue.add(envelope.kind, { envelope, ...data }, { jobId, ...(delay && { delay }) });
        return jobId;
      };
      // An account paused at the upgrade: BullMQ 5 kept its waiting jobs in a paused list,
      // which BullMQ 6 no longer reads (it keeps them in the wait list, as the second job).
      await queue.pause();
      const [paused, waitingPaused] = payoutBatch("paused-before-lanes", 2);
      const pausedId = await add(paused as JobInput, {});
      await p.connection().lrem(bullKeys.wait(queue.qualifiedName), 0, pausedId);
      await p.connection().lpush(bullKeys.legacyPaused(queue.qualifiedName), pausedId);
      const waitingPausedId = await add(waitingPaused as JobInput, {});
      // A row waiting out a backoff, and a payout confirming a PENDING answer.
      const [row, confirming] = payoutBatch("delayed-before-lanes", 2);
      const rowId = await add(row as JobInput, {}, 600_000);
      const confirmingId = await add(
        confirming as JobInput,
        { state: { phase: "confirm", upstreamId: "t-1", pendingSince: Date.now(), lookups: 0 } },
        600_000,
      );
      expect((await queue.getJob(pausedId))?.priority).toBe(0);

      // The pass a worker start runs (the first case starts workers), called alone: a further
      // set of workers would only add connections to close.
      const moved = await laneUnlanedJobs(queue, p.connection(), lanePassKey(p.space(), "default"));
      expect(moved).toBe(4);
      expect(await p.connection().exists(bullKeys.legacyPaused(queue.qualifiedName))).toBe(0);
      for (const id of [pausedId, waitingPausedId])
        expect((await queue.getJob(id))?.priority).toBe(LANE_PRIORITY.bulk);
      expect((await queue.getJob(rowId))?.priority).toBe(LANE_PRIORITY.bulk);
      expect((await queue.getJob(confirmingId))?.priority).toBe(LANE_PRIORITY.lookup);
      // Still where they were: paused, and delayed until their time.
      for (const id of [pausedId, waitingPausedId])
        expect(await queue.getJobState(id)).toBe("prioritized");
      expect(await queue.getJobState(rowId)).toBe("delayed");
      for (const id of [pausedId, waitingPausedId, rowId, confirmingId])
        await (await queue.getJob(id))?.remove();
    } finally {
      await queue.resume();
      await queue.close();
    }
  });
});

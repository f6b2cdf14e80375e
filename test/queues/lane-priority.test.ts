import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { EnqueueValidationError } from "../../src/queues/enqueue-error.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { LANE_PRIORITY } from "../../src/queues/lanes.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { payoutBatch } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";

const p = usePipeline({}, { startWorkers: false });

describe("the lane a job is enqueued in", () => {
  it("one by one: urgent; many at once: bulk; a job's priority says otherwise", async () => {
    const [one, many, urgentRow, bulkOne] = [
      payoutBatch("lane-one", 1),
      payoutBatch("lane-many", 2),
      payoutBatch("lane-urgent-row", 1),
      payoutBatch("lane-bulk-one", 1),
    ];
    const single = await p.producer().enqueue(one[0] as JobInput);
    const batch = await p.producer().enqueueMany(many);
    const [explicitUrgent] = await p
      .producer()
      .enqueueMany([{ ...(urgentRow[0] as JobInput), priority: "urgent" }]);
    const explicitBulk = await p
      .producer()
      .enqueue({ ...(bulkOne[0] as JobInput), priority: "bulk" });
    const queue = new Queue(accountQueueName(p.space(), "default"), {
      connection: p.connection(),
      prefix: p.config().redisPrefix,
    });
    const priorityOf = async (jobId: string) => (await queue.getJob(jobId))?.priority;
    expect(await priorityOf(single.jobId)).toBe(LANE_PRIORITY.urgent);
    for (const j of batch) expect(await priorityOf(j.jobId)).toBe(LANE_PRIORITY.bulk);
    expect(await priorityOf(explicitUrgent?.jobId as string)).toBe(LANE_PRIORITY.urgent);
    expect(await priorityOf(explicitBulk.jobId)).toBe(LANE_PRIORITY.bulk);
    await queue.close();
  });

  it("refuses a priority other than urgent or bulk, naming the field", async () => {
    const [job] = payoutBatch("lane-bad", 1);
    const refused = await p
      .producer()
      .enqueue({ ...(job as JobInput), priority: "lookup" as never })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EnqueueValidationError);
    expect((refused as EnqueueValidationError).issues.map((i) => i.field)).toEqual(["priority"]);
  });
});

import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { DeadLetters } from "../../src/queues/dead-letters.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { ReplayConflictError } from "../../src/queues/replay-conflict-error.js";
import type { ResultsStore } from "../../src/results/results-store.js";
import { bankJob } from "../fixtures/batches.js";
import { until, useService } from "../helpers/service.js";

// One attempt a job, so a provider error makes a dead letter at once.
const h = useService({ MONEYQ_MAX_ATTEMPTS: "1" });

describe("a replay raced by something outside its lock", () => {
  it("is a conflict, not an internal error, when the job leaves the failed set under it", async () => {
    await h.sb.control("PUT", "/accounts/acct_alpha/faults", { body: { errorRate: 1 } });
    let jobId: string;
    try {
      jobId = (
        await h.api("POST", "/v1/jobs", {
          body: bankJob({ batchId: "outside", reference: "outside-1" }),
        })
      ).body.jobId;
      await until(
        () => h.api("GET", `/v1/jobs/${jobId}`),
        (r) => r.body?.state === "failed" && r.body?.result !== null,
      );
    } finally {
      await h.sb.control("DELETE", "/accounts/acct_alpha/faults");
    }
    const prefix = h.config().redisPrefix;
    const queue = new Queue(accountQueueName(h.space(), "alpha"), {
      connection: h.redis(),
      prefix,
    });
    // The service's own worker must not fetch the job back meanwhile: on a slow Redis it could
    // dead-letter it again before the replay looks, and the replay would find a dead letter.
    expect((await h.api("POST", "/v1/accounts/alpha/pause", { body: {} })).status).toBe(200);
    const results = h.service().results;
    // Between the replay's look at the job and its retry, BullMQ's own retry (no lock) runs.
    const racing = new Proxy(results, {
      get(target, property) {
        if (property === "recorded")
          return async (account: string, id: string) => {
            await (await queue.getJob(id))?.retry("failed");
            return target.recorded(account, id);
          };
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as ResultsStore;
    try {
      const replay = new DeadLetters(h.redis(), prefix, racing).replay("alpha", jobId);
      await expect(replay).rejects.toBeInstanceOf(ReplayConflictError);
      await expect(replay).rejects.toThrow(/not a dead letter/);
    } finally {
      await queue.close();
    }
  });
});

import { describe, expect, it } from "vitest";
import { consumeResults, resultStreams } from "../../examples/results-consumer.js";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { payoutBatch } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";

const p = usePipeline();

describe("the results consumer example", () => {
  it("reads every result once through a consumer group, and resumes after a restart without losing any", async () => {
    const streams = resultStreams(p.config().redisPrefix, ["default"], p.space().cluster);
    await p.producer().enqueueMany(payoutBatch("consumer", 6) as JobInput[]);
    await p.waitForResults(6);
    const seen: string[] = [];
    const first = new AbortController();
    // The first consumer stops after three results, as if it were restarted.
    await consumeResults(p.redis.connect(), {
      streams,
      group: "ledger",
      consumer: "c1",
      signal: first.signal,
      handle: async (event) => {
        expect(event.type).toBe(`job.${event.data.result}`);
        seen.push(String(event.data.jobId));
        if (seen.length === 3) first.abort();
      },
    });
    const second = new AbortController();
    await consumeResults(p.redis.connect(), {
      streams,
      group: "ledger",
      consumer: "c1",
      signal: second.signal,
      handle: async (event) => {
        seen.push(String(event.data.jobId));
        if (seen.length === 6) second.abort();
      },
    });
    const ids = (await p.results()).map((r) => r.jobId);
    expect(seen).toEqual(ids);
  });
});

import { describe, expect, it } from "vitest";
import { payoutBatch } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitUntil } from "../helpers/wait-until.js";

// 10 requests/s: slots 104 ms apart, so eight concurrent jobs hold slots up to a second ahead.
const p = usePipeline({ MONEYQ_RATE_LIMIT_PER_SECOND: "10", MONEYQ_CONCURRENCY: "8" });

const counted = async (metric: "rateSlotsMissed" | "upstreamRequests") =>
  (await p.workers().metrics[metric].get()).values.reduce((n, v) => n + v.value, 0);

describe("a worker that wakes up too late for its slot", () => {
  it("gives the slot up, counts it as missed, and still finishes every job", async () => {
    expect(await counted("rateSlotsMissed")).toBe(0);
    const jobs = payoutBatch("missed", 12);
    await p.producer().enqueueMany(jobs);
    // Past the cold start (a process's first requests take two slots each), slots are 104 ms
    // apart: the hold below spans several.
    await waitUntil(async () => (await counted("upstreamRequests")) >= 4, 20_000, "4 requests", 5);
    // The event loop held for 400 ms, as on an overloaded host: every slot inside it is late.
    const until = performance.now() + 400;
    while (performance.now() < until);
    const results = await p.waitForResults(jobs.length, 30_000);
    expect(results.map((r) => r.result)).toEqual(jobs.map(() => "succeeded"));
    expect(await counted("rateSlotsMissed")).toBeGreaterThan(0);
  });
});

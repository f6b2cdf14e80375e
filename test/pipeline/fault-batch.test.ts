import { describe, expect, it } from "vitest";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { payoutBatch } from "../fixtures/batches.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { usePipeline } from "../helpers/pipeline.js";

const p = usePipeline(
  {
    MONEYQ_CONCURRENCY: "64",
    MONEYQ_RATE_LIMIT_PER_SECOND: "2000",
    MONEYQ_REQUEST_TIMEOUT_MS: "2000",
  },
  {
    settleDelayMs: 20,
    sandboxAccounts: [
      {
        accountId: "acct_demo",
        apiKey: DEMO_API_KEY,
        faults: { dropAfterCommitRate: 0.2, errorRate: 0.2, rateLimitPerSecond: 400, seed: 11 },
      },
    ],
  },
);

// The sandbox allows 400 requests/s and moneyq asks for 2000/s, so 429s happen however fast
// this machine is.
describe("a 2,000-job batch through drops, 5xx and 429", () => {
  it("ends with exactly one terminal result per job and at most one effect per key", async () => {
    const enqueued = await p.producer().enqueueMany(payoutBatch("fault-batch", 2000));
    const results = await p.waitForResults(2000, 120_000);
    await expectExactlyOnce(p.sb, "acct_demo", enqueued, results);
    const kinds = new Set(results.map((r) => r.result));
    expect(kinds).toEqual(new Set(["succeeded"]));
    const retried = results.filter((r) => r.attempts > 1).length;
    expect(retried).toBeGreaterThan(100);
    const upstreamPauses = (await p.workers().metrics.rateLimitPauses.get()).values.find(
      (v) => v.labels.source === "upstream",
    );
    expect(upstreamPauses?.value ?? 0).toBeGreaterThan(0);
  }, 180_000);
});

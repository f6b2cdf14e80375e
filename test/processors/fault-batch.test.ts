import { describe, expect, it } from "vitest";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { payoutBatch } from "../fixtures/batches.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitUntil } from "../helpers/wait-until.js";

const FAULTS = { dropAfterCommitRate: 0.2, errorRate: 0.2, seed: 11 };
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
        faults: { ...FAULTS, rateLimitPerSecond: 20 },
      },
    ],
  },
);

const upstreamPauses = async () =>
  (await p.workers().metrics.rateLimitPauses.get()).values.find(
    (v) => v.labels.source === "upstream",
  )?.value ?? 0;

// The sandbox allows 20 requests/s and moneyq asks for 2000/s until moneyq has paused on a 429;
// then 1000/s. 429s so happen however fast or slow this machine is, and the batch ends soon.
describe("a 2,000-job batch through drops, 5xx and 429", () => {
  it("ends with exactly one terminal result per job and at most one effect per key", async () => {
    const enqueued = await p.producer().enqueueMany(payoutBatch("fault-batch", 2000));
    await waitUntil(
      async () => (await upstreamPauses()) > 0,
      30_000,
      "a 429 pause at 20 requests/s",
      20,
    );
    const raised = await p.sb.control("PUT", "/accounts/acct_demo/faults", {
      body: { ...FAULTS, rateLimitPerSecond: 1000 },
    });
    expect(raised.status).toBe(200);
    const results = await p.waitForResults(2000, 200_000);
    await expectExactlyOnce(p.sb, "acct_demo", enqueued, results);
    // Listed whole, so that a failure names each job's code and message.
    expect(results.filter((r) => r.result !== "succeeded")).toEqual([]);
    const retried = results.filter((r) => r.attempts > 1).length;
    expect(retried).toBeGreaterThan(100);
    expect(await upstreamPauses()).toBeGreaterThan(0);
  }, 240_000);
});

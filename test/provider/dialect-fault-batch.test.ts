import { describe, expect, it } from "vitest";
import { DEMO_API_KEY } from "../../src/sandbox/index.js";
import { payoutBatch } from "../fixtures/batches.js";
import {
  FOREIGN_PROFILE,
  FOREIGN_PROFILE_DOC,
  profileFile,
} from "../fixtures/provider-profiles.js";
import { expectExactlyOnce } from "../helpers/exactly-once.js";
import { usePipeline } from "../helpers/pipeline.js";
import { waitUntil } from "../helpers/wait-until.js";

// The fault batch of test/processors/fault-batch.test.ts, against a provider in another dialect.
const FAULTS = { dropAfterCommitRate: 0.2, errorRate: 0.2, seed: 11 };
const p = usePipeline(
  {
    MONEYQ_CONCURRENCY: "64",
    MONEYQ_RATE_LIMIT_PER_SECOND: "2000",
    MONEYQ_REQUEST_TIMEOUT_MS: "2000",
    MONEYQ_PROVIDER_PROFILE: profileFile(FOREIGN_PROFILE_DOC),
  },
  {
    settleDelayMs: 20,
    sandbox: { profile: FOREIGN_PROFILE },
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

describe("a 2,000-job batch through drops, 5xx and 429 in a foreign dialect", () => {
  it("ends with exactly one terminal result per job and at most one effect per key", async () => {
    const enqueued = await p.producer().enqueueMany(payoutBatch("dialect-fault-batch", 2000));
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
    expect(new Set(results.map((r) => r.upstreamStatus))).toEqual(new Set(["successful"]));
    expect(results.filter((r) => r.attempts > 1).length).toBeGreaterThan(100);
    expect(await upstreamPauses()).toBeGreaterThan(0);
  }, 240_000);
});

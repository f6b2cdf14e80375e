import { describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { FOREIGN_PROFILE_DOC, profileFile, profileOf } from "../fixtures/provider-profiles.js";
import { usePipeline } from "../helpers/pipeline.js";

// The provider says PROCESSING while a payout is under way; this profile has never heard of it.
const sandboxSays = profileOf({
  ...FOREIGN_PROFILE_DOC,
  statuses: { ...FOREIGN_PROFILE_DOC.statuses, pending: ["PROCESSING"] },
});
const moneyqKnows = {
  ...FOREIGN_PROFILE_DOC,
  statuses: { ...FOREIGN_PROFILE_DOC.statuses, pending: ["pending"] },
};
const p = usePipeline(
  { MONEYQ_PROVIDER_PROFILE: profileFile(moneyqKnows), MONEYQ_CONFIRM_DEADLINE_MS: "3000" },
  { settleDelayMs: 700, sandbox: { profile: sandboxSays } },
);

const payout = (reference: string, accountNumber = "0123456789"): JobInput => ({
  kind: "payout.bank",
  account: "default",
  batchId: "unknown-status",
  reference,
  request: {
    body: {
      amount: 42,
      currency: "NGN",
      bankCode: "044",
      accountNumber,
      accountName: "Ada Obi",
      bankName: "Access Bank",
    },
  },
});

describe("a provider status in none of the profile's lists", () => {
  it("is looked up again, never failed, until the provider says it succeeded", async () => {
    const [job] = await p.producer().enqueueMany([payout("r1")]);
    const result = await p.resultOf(job?.jobId as string);
    expect(result).toMatchObject({ result: "succeeded", upstreamStatus: "successful" });
    const requests = (await p.sb.control("GET", "/requests")).body.data.requests as {
      at: number;
      method: string;
      path: string;
    }[];
    const submissions = requests.filter((r) => r.method === "POST");
    const lookups = requests.filter((r) => r.path === `/v1/transactions/${result.upstreamId}`);
    expect(submissions).toHaveLength(1);
    expect(lookups.length).toBeGreaterThanOrEqual(2);
    // The sandbox answers PROCESSING until the payout settles, 700 ms after it was sent: a
    // lookup before then was answered PROCESSING, and the job looked again rather than fail.
    const settledAt = (submissions[0]?.at ?? 0) + 700;
    expect(lookups.filter((l) => l.at < settledAt).length).toBeGreaterThanOrEqual(1);
    expect(lookups.filter((l) => l.at >= settledAt).length).toBeGreaterThanOrEqual(1);
  });

  it("that never changes ends at the deadline for an operator, with the provider's word", async () => {
    // The sandbox's magic account number keeps the payout pending for good.
    const [job] = await p.producer().enqueueMany([payout("r2", "0000000002")]);
    const result = await p.resultOf(job?.jobId as string, 20_000);
    expect(result).toMatchObject({
      result: "needs_reconciliation",
      code: "confirm_deadline",
      upstreamStatus: "PROCESSING",
      message: expect.stringMatching(/^still PROCESSING after 3000 ms and \d+ lookups$/),
    });
  });
});

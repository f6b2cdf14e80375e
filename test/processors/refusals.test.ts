import { afterAll, describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { bankPayout } from "../fixtures/batches.js";
import { profileFile } from "../fixtures/provider-profiles.js";
import { usePipeline } from "../helpers/pipeline.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

// A provider we did not write, that says its refusals in its own way: in a 200, and 409 for
// both a key still in flight and a key reused with another body.
const provider = await startScriptedServer();
afterAll(() => provider.close());

const KEY = "sk_refusal_key_0001";
const p = usePipeline({
  PAYMENTS_API_URL: provider.baseUrl,
  PAYMENTS_API_KEY: KEY,
  // Each refusal's reading is the result: a refusal for want of funds fails, holding no lane.
  MONEYQ_INSUFFICIENT_FUNDS: "fail",
  MONEYQ_PROVIDER_PROFILE: profileFile({
    refusals: {
      keyReused: [{ statuses: [409], message: "different request" }],
      insufficientFunds: [{ message: "^insufficient balance$" }],
    },
  }),
});

async function runOne(job: JobInput) {
  const before = provider.requests.length;
  const [enqueued] = await p.producer().enqueueMany([job]);
  const result = await p.resultOf(enqueued?.jobId as string);
  // Time for anything that would still be sent after the result.
  await new Promise((r) => setTimeout(r, 300));
  return { result, sent: provider.requests.slice(before) };
}

const refusal = (message: string) => ({ status: 200, body: { success: false, message } });
const accepted = {
  status: 200,
  body: { success: true, message: "ok", data: { transactionId: "T-9", status: "SUCCESSFUL" } },
};

describe("a refusal is read wherever it stands", () => {
  it("a 200 carrying the error envelope: one request, failed with the provider's message", async () => {
    provider.reply(refusal("Beneficiary bank unavailable"));
    const { result, sent } = await runOne(bankPayout("refusals", "r1"));
    expect(sent).toHaveLength(1);
    expect(result).toMatchObject({
      result: "failed",
      code: "refused",
      message: "withdrawToBank: Beneficiary bank unavailable",
    });
  });

  it("its message is redacted and cut as every reason is", async () => {
    provider.reply(refusal(`declined for ${KEY} ${"x".repeat(900)}`));
    const { result, sent } = await runOne(bankPayout("refusals", "r2"));
    expect(sent).toHaveLength(1);
    expect(result.result).toBe("failed");
    expect(result.message ?? "").not.toContain(KEY);
    expect(result.message ?? "").toContain("(cut from ");
    expect((result.message ?? "").length).toBeLessThan(600);
  });

  it("the profile's insufficient-funds rule reads a refusal in a 200 by its message", async () => {
    provider.reply(refusal("Insufficient balance"));
    const { result, sent } = await runOne(bankPayout("refusals", "r3"));
    expect(sent).toHaveLength(1);
    expect(result).toMatchObject({ result: "failed", code: "insufficient_funds" });
  });

  it("a 409 the profile reads as a reused key fails at once", async () => {
    provider.reply({
      status: 409,
      body: { success: false, message: "Idempotency key already used with a different request" },
    });
    const { result, sent } = await runOne(bankPayout("refusals", "r4"));
    expect(sent).toHaveLength(1);
    expect(result).toMatchObject({ result: "failed", code: "idempotency_key_reused" });
  });

  it("a 409 no rule reads is a key in flight: sent again with the same key", async () => {
    // The first two sends under a key answer 409, the third the payout.
    provider.reply((request, earlier) =>
      earlier.filter((r) => r.headers.idempotencykey === request.headers.idempotencykey).length < 2
        ? { status: 409, body: { success: false, message: "still being processed" } }
        : accepted,
    );
    const { result, sent } = await runOne(bankPayout("refusals", "r5"));
    expect(result.result).toBe("succeeded");
    expect(sent.length).toBe(3);
    expect(new Set(sent.map((r) => r.headers.idempotencykey)).size).toBe(1);
  });
});

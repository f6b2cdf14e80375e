import { afterAll, describe, expect, it } from "vitest";
import type { JobInput } from "../../src/queues/job-envelope.js";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { startScriptedServer } from "../helpers/scripted-server.js";
import { waitUntil } from "../helpers/wait-until.js";

// A provider we did not write: it answers every request with what the test scripts.
const provider = await startScriptedServer();
afterAll(() => provider.close());
const KEY = "sk_canary_provider_key_91";
const p = usePipeline({ PAYMENTS_API_URL: provider.baseUrl, PAYMENTS_API_KEY: KEY });

const payout = (reference: string): JobInput => bankPayout("unreadable", reference);

async function runOne(job: JobInput) {
  const before = provider.requests.length;
  const [enqueued] = await p.producer().enqueueMany([job]);
  const result = await p.resultOf(enqueued?.jobId as string);
  await new Promise((r) => setTimeout(r, 200));
  return { result, sent: provider.requests.length - before };
}

describe("a success the profile cannot read", () => {
  it("ends the job once, keeping the provider's data with the key redacted", async () => {
    provider.reply({
      status: 200,
      body: {
        success: true,
        message: `queued for ${KEY}`,
        data: { ref: "PAY-1", progress: { stage: 2 }, echo: KEY },
      },
    });
    const { result, sent } = await runOne(payout("r1"));
    expect(sent).toBe(1);
    expect(result).toMatchObject({
      result: "needs_reconciliation",
      code: "unrecognised_answer",
      attempts: 1,
      upstreamData: { ref: "PAY-1", progress: { stage: 2 }, echo: "[REDACTED]" },
    });
    expect(result.message).toContain('answered "queued for [REDACTED]"');
    expect(result.message).toContain("answers.withdrawToBank.id (transactionId)");
    expect(JSON.stringify(result)).not.toContain(KEY);
  });

  it("never resends after success: true, even outside the spec's envelope", async () => {
    provider.reply({ status: 200, body: { success: true, data: ["accepted"] } });
    const { result, sent } = await runOne(payout("r2"));
    expect(sent).toBe(1);
    expect(result).toMatchObject({
      result: "needs_reconciliation",
      code: "unrecognised_answer",
      upstreamData: ["accepted"],
    });
  });

  it("takes a creation's success: true as its success", async () => {
    provider.reply({ status: 200, body: { success: true, message: "created" } });
    const { result, sent } = await runOne({
      kind: "wallet.create",
      account: "default",
      idempotencyKey: "wallet-unreadable",
      request: { body: { currency: "NGN" } },
    });
    expect(sent).toBe(1);
    expect(result).toMatchObject({ result: "succeeded" });
    expect(result.upstreamId).toBeUndefined();
  });

  it("still retries a 2xx that is not a success at all", async () => {
    provider.reply({ status: 200, raw: "<html>maintenance</html>" });
    const posts = () => provider.requests.filter((r) => r.method === "POST").length;
    const before = posts();
    const [enqueued] = await p.producer().enqueueMany([payout("r3")]);
    await waitUntil(() => posts() >= before + 2, 10_000, "the retry", 50);
    provider.reply({
      status: 200,
      body: { success: true, message: "ok", data: { transactionId: "t-3", status: "SUCCESSFUL" } },
    });
    const result = await p.resultOf(enqueued?.jobId as string, 20_000);
    expect(result).toMatchObject({ result: "succeeded", upstreamId: "t-3" });
    expect(result.attempts).toBeGreaterThan(1);
  });
});

import { afterAll, describe, expect, it } from "vitest";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { startScriptedServer } from "../helpers/scripted-server.js";

const provider = await startScriptedServer();
afterAll(() => provider.close());
const p = usePipeline({ PAYMENTS_API_URL: provider.baseUrl, PAYMENTS_API_KEY: "sk_after_0001" });

describe("a throw after the provider answered 200", () => {
  it("ends the job for an operator and never resends", async () => {
    // Anything that breaks after the answer arrived: here, counting it.
    const counter = p.workers().metrics.upstreamRequests;
    const inc = counter.inc.bind(counter);
    counter.inc = ((labels: { status_class?: string }, value?: number) => {
      if (labels?.status_class === "2xx") throw new Error("metrics store unavailable");
      return inc(labels as never, value as never);
    }) as typeof counter.inc;
    provider.reply({
      status: 200,
      body: { success: true, message: "ok", data: { transactionId: "t-1", status: "SUCCESSFUL" } },
    });
    const job = bankPayout("after", "r1");
    const [enqueued] = await p.producer().enqueueMany([job]);
    const result = await p.resultOf(enqueued?.jobId as string, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    counter.inc = inc;
    expect(provider.requests).toHaveLength(1);
    expect(result).toMatchObject({
      result: "needs_reconciliation",
      code: "unrecognised_answer",
      attempts: 1,
    });
    expect(result.message).toContain("metrics store unavailable");
  });
});

import { afterAll, describe, expect, it } from "vitest";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { startScriptedServer } from "../helpers/scripted-server.js";
import { waitUntil } from "../helpers/wait-until.js";

const provider = await startScriptedServer();
afterAll(() => provider.close());
// Two attempts, then up to two lookups.
const p = usePipeline({
  PAYMENTS_API_URL: provider.baseUrl,
  PAYMENTS_API_KEY: "sk_lookups_0001",
  MONEYQ_MAX_ATTEMPTS: "2",
});

function waitForRequests(count: number, timeoutMs: number): Promise<void> {
  return waitUntil(
    () => provider.requests.length >= count,
    timeoutMs,
    () => `${count} requests, have ${provider.requests.length}`,
    20,
  );
}

describe("a lookup of an unknown outcome that meets passing 5xx answers", () => {
  it("looks again under the same key until the provider answers, and ends succeeded", async () => {
    provider.reply({ status: 503, body: { success: false, message: "unavailable" } });
    const [enqueued] = await p.producer().enqueueMany([bankPayout("lookups", "r1")]);
    // Two submission attempts and the first lookup, all answered 503.
    await waitForRequests(3, 15_000);
    provider.reply({
      status: 200,
      body: { success: true, message: "ok", data: { transactionId: "t-9", status: "SUCCESSFUL" } },
    });
    const result = await p.resultOf(enqueued?.jobId as string, 15_000);
    expect(result).toMatchObject({ result: "succeeded", upstreamId: "t-9" });
    const keys = new Set(provider.requests.map((r) => r.headers.idempotencykey));
    expect(keys).toEqual(new Set([enqueued?.idempotencyKey]));
    expect(provider.requests).toHaveLength(4);
  });
});

import { afterAll, describe, expect, it } from "vitest";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { startScriptedServer } from "../helpers/scripted-server.js";
import { waitUntil } from "../helpers/wait-until.js";

const provider = await startScriptedServer();
afterAll(() => provider.close());
// Two attempts, then up to two lookups; the deadline is short enough that lookups measured
// from when they began would give a late PENDING up.
const DEADLINE_MS = 2_500;
const p = usePipeline({
  PAYMENTS_API_URL: provider.baseUrl,
  PAYMENTS_API_KEY: "sk_lookups_0001",
  MONEYQ_MAX_ATTEMPTS: "2",
  MONEYQ_CONFIRM_DEADLINE_MS: String(DEADLINE_MS),
});

const answer = (status: string) => ({
  status: 200,
  body: { success: true, message: "ok", data: { transactionId: "t-late", status } },
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

  it("a lookup answered PENDING starts the confirmation deadline then, not when the lookups began", async () => {
    const start = provider.requests.length;
    // Two attempts and the first lookup answered 503, the second lookup PENDING (about 2 s
    // after the lookups began), then two confirming lookups PENDING and the third SUCCESSFUL.
    provider.reply((_request, earlier) => {
      const n = earlier.length - start;
      if (n < 3) return { status: 503, body: { success: false, message: "unavailable" } };
      return answer(n < 6 ? "PENDING" : "SUCCESSFUL");
    });
    const [enqueued] = await p.producer().enqueueMany([bankPayout("lookups", "r-late")]);
    const result = await p.resultOf(enqueued?.jobId as string, 20_000);
    const requests = provider.requests.slice(start);
    expect(requests).toHaveLength(7);
    const pendingAt = requests[3]?.at as number;
    // The lookups began as the second attempt failed; the last confirming lookup came after
    // the deadline counted from then.
    expect((requests[6]?.at as number) - (requests[1]?.at as number)).toBeGreaterThan(DEADLINE_MS);
    expect((requests[6]?.at as number) - pendingAt).toBeLessThan(DEADLINE_MS);
    expect(result).toMatchObject({ result: "succeeded", upstreamId: "t-late" });
  });
});

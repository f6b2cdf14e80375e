import { afterAll, describe, expect, it } from "vitest";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys, lockKeyOf } from "../../src/redis/bullmq-internals.js";
import { bankPayout } from "../fixtures/batches.js";
import { usePipeline } from "../helpers/pipeline.js";
import { startScriptedServer } from "../helpers/scripted-server.js";
import { waitUntil } from "../helpers/wait-until.js";

// A worker that loses a job's lock while the job's request is out abandons the request at
// once (its abort signal reaches the HTTP request) and records nothing; the job's next owner
// sends it again under the same key.
const provider = await startScriptedServer();
afterAll(() => provider.close());
const LOCK_MS = 1_000;
const p = usePipeline({
  PAYMENTS_API_URL: provider.baseUrl,
  PAYMENTS_API_KEY: "sk_abandon_0001",
  MONEYQ_LOCK_DURATION_MS: String(LOCK_MS),
  MONEYQ_STALLED_INTERVAL_MS: "1000",
  // Far longer than the test waits for the request to be abandoned.
  MONEYQ_REQUEST_TIMEOUT_MS: "60000",
});

describe("a worker that loses a job's lock while its request is out", () => {
  it("abandons the request, records nothing, and the next owner sends it again under the same key", async () => {
    provider.reply({ hang: true });
    const { jobId, idempotencyKey } = await p.producer().enqueue(bankPayout("abandon", "r1"));
    await waitUntil(() => provider.requests.length === 1, 10_000, "the first request");
    const answered = {
      status: 200,
      body: { success: true, message: "ok", data: { transactionId: "t-1", status: "SUCCESSFUL" } },
    };
    provider.reply(answered);
    // Another worker takes the job (its lock, for a moment): this worker's renewal fails.
    const lockKey = lockKeyOf({
      queueQualifiedName: bullKeys.queue(
        p.config().redisPrefix,
        accountQueueName(p.space(), "default"),
      ),
      id: jobId,
    });
    await p.connection().set(lockKey, "another-worker", "PX", LOCK_MS * 2);
    await waitUntil(() => provider.abandoned() === 1, 10_000, "the request abandoned");

    const result = await p.resultOf(jobId, 30_000);
    expect(result).toMatchObject({ result: "succeeded", upstreamId: "t-1" });
    expect(provider.requests.map((r) => r.headers.idempotencykey)).toEqual([
      idempotencyKey,
      idempotencyKey,
    ]);
  });
});

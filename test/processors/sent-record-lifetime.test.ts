import { describe, expect, it } from "vitest";
import { RateGate } from "../../src/processors/rate-gate.js";
import { accountQueueName } from "../../src/queues/queue-names.js";
import { bullKeys, jobKeyOf } from "../../src/redis/bullmq-internals.js";
import { SENT_FIELD } from "../../src/redis/keys.js";
import { usePipeline } from "../helpers/pipeline.js";
import { singleRedis } from "../helpers/redis.js";

// The "sent" record of a kind without an idempotency key lasts as long as its job: a job that
// outlives confirmation deadline plus retention (no worker for its account meanwhile) is still
// never sent twice.
const p = usePipeline(
  { MONEYQ_CONFIRM_DEADLINE_MS: "300", MONEYQ_RETENTION_MS: "700" },
  { startWorkers: false },
);

describe("a job marked sent, with no worker for longer than deadline plus retention", () => {
  it("ends needs_reconciliation and is never sent again", async () => {
    const accountId = (await p.sb.control("GET", "/accounts")).body.data.accounts[0].accountId;
    const prefix = p.config().redisPrefix;
    const { jobId } = await p.producer().enqueue({
      kind: "collection.virtual-account",
      account: "default",
      idempotencyKey: "va-outlives-retention",
      request: { body: { amount: 1000, validFor: 30 } },
    });
    // A worker cleared its request (the gate records "sent") and crashed before anything else.
    const jobKey = jobKeyOf({
      queueQualifiedName: bullKeys.queue(prefix, accountQueueName(singleRedis, "default")),
      id: jobId,
      // biome-ignore lint/suspicious/noExplicitAny: only the two fields jobKeyOf reads.
    } as any);
    const gate = new RateGate(p.connection(), prefix, 400);
    const slot = await gate.reserve("default", 50, 1, undefined, { sentKey: jobKey });
    expect(slot.reserved).toBe(true);
    if (!slot.reserved) return;
    expect(await gate.clear("default", slot.at, false, { sentKey: jobKey })).toEqual({
      clear: true,
    });
    expect(await p.connection().hexists(jobKey, SENT_FIELD)).toBe(1);
    // Longer than confirmation deadline plus retention, the "sent" record's whole former life.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await p.connection().hexists(jobKey, SENT_FIELD)).toBe(1);

    await p.startMoreWorkers();
    const result = await p.resultOf(jobId);
    expect(result).toMatchObject({ result: "needs_reconciliation", code: "outcome_unknown" });
    const requests = (await p.sb.control("GET", "/requests", { query: { accountId } })).body.data
      .requests;
    expect(requests.filter((r: { path: string }) => r.path.includes("virtual-account"))).toEqual(
      [],
    );
  });
});

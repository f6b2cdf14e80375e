import { describe, expect, it } from "vitest";
import { backlogKey, batchKeys, keyspace, resultMarkerKey } from "../../src/redis/keys.js";
import { JobResult, type ResultKind } from "../../src/results/job-result.js";
import { ResultsStore } from "../../src/results/results-store.js";
import { useTestRedis } from "../helpers/redis.js";

const redis = useTestRedis("results");

function resultOf(jobId: string, result: ResultKind, row?: number): JobResult {
  return {
    jobId,
    kind: "payout.bank",
    account: "default",
    idempotencyKey: `key-${jobId}`,
    ...(row !== undefined && { batchId: "b1", row, reference: `ref-${row}` }),
    result,
    ...(result !== "succeeded" && { code: "upstream_failed", message: "why" }),
    attempts: 1,
    enqueuedAt: "2026-11-21T00:00:00.000Z",
    finishedAt: "2026-11-21T00:00:01.000Z",
    durationMs: 1000,
  };
}

describe("ResultsStore", () => {
  it("records concurrent results once each, and a batch's rows, counters and state with them", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:a`;
    const batch = batchKeys(keyspace(prefix), "default", "b1");
    await connection.hset(batch.meta, {
      id: "b1",
      account: "default",
      state: "queued",
      accepted: 3,
      skipped: 0,
      done: 0,
    });
    const store = new ResultsStore(connection, { prefix, retentionMs: 60_000, maxLen: 1000 });

    const firsts = await Promise.all([
      store.emit(resultOf("j0", "succeeded")),
      store.emit(resultOf("j1", "succeeded", 1)),
      store.emit(resultOf("j2", "failed", 2)),
      store.emit(resultOf("j1", "failed", 1)),
      store.emit(resultOf("j3", "needs_reconciliation", 3)),
      store.emit(resultOf("j2", "failed", 2)),
    ]);

    expect(firsts).toEqual([true, true, true, false, true, false]);
    // Four results, and the batch's two events: it started, and it finished.
    const entries = await connection.xrange(store.streamKey("default"), "-", "+");
    const types = entries.map(([, f]) => JSON.parse(f[f.indexOf("event") + 1] as string).type);
    expect(types.filter((t) => t.startsWith("job."))).toHaveLength(4);
    expect(types.filter((t) => t.startsWith("batch."))).toEqual([
      "batch.started",
      "batch.completed_with_failures",
    ]);
    expect((await store.get("default", "j1"))?.result).toBe("succeeded");
    expect(await connection.hgetall(batch.meta)).toMatchObject({
      state: "completed_with_failures",
      done: "3",
      "n:succeeded": "1",
      "n:failed": "1",
      "n:needs_reconciliation": "1",
    });
    expect(JSON.parse((await connection.hget(batch.rows, "2")) as string)).toMatchObject({
      row: 2,
      result: "failed",
      error: "upstream_failed: why",
    });
    expect(await connection.zrange(backlogKey(keyspace(prefix), "default"), 0, "-1")).toEqual([
      "j3",
    ]);
  });

  it("writes no batch row for a batch that does not exist", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:b`;
    const store = new ResultsStore(connection, { prefix, retentionMs: 60_000, maxLen: 1000 });
    expect(await store.emit(resultOf("j9", "succeeded", 9))).toBe(true);
    expect(await connection.exists(batchKeys(keyspace(prefix), "default", "b1").rows)).toBe(0);
    expect(await connection.xlen(store.streamKey("default"))).toBe(1);
  });

  it("writes each result as its event envelope, with a new id each, and as the bare result", async () => {
    const connection = redis.connect();
    const store = new ResultsStore(connection, {
      prefix: `${redis.prefix}:c`,
      retentionMs: 60_000,
      maxLen: 1000,
    });
    const results = [resultOf("j1", "succeeded"), resultOf("j2", "failed", 2)];
    await Promise.all(results.map((r) => store.emit(r)));

    const entries = await connection.xrange(store.streamKey("default"), "-", "+");
    const fields = entries.map(([, f]) => ({
      event: JSON.parse(f[f.indexOf("event") + 1] as string),
      result: JSON.parse(f[f.indexOf("result") + 1] as string),
    }));
    expect(fields.map((f) => f.result)).toEqual(results);
    expect(fields.map((f) => ({ ...f.event, id: undefined }))).toEqual(
      results.map((r) => ({
        type: `job.${r.result}`,
        id: undefined,
        timestamp: r.finishedAt,
        data: r,
      })),
    );
    const ids = fields.map((f) => f.event.id as string);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(2);
  });

  it("reads a result whose code a later release wrote as written, and refuses a made-up result kind", async () => {
    const connection = redis.connect();
    const prefix = `${redis.prefix}:later`;
    const store = new ResultsStore(connection, { prefix, retentionMs: 60_000, maxLen: 1000 });
    const later = { ...resultOf("j9", "failed"), code: "a_later_release_code" };
    await connection.set(resultMarkerKey(keyspace(prefix), "default", "j9"), JSON.stringify(later));
    expect(await store.get("default", "j9")).toMatchObject({
      result: "failed",
      code: "a_later_release_code",
    });
    expect(JobResult.safeParse({ ...later, result: "paid_twice" }).success).toBe(false);
  });
});

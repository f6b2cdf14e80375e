import { describe, expect, it } from "vitest";
import { BatchNotCancellableError, BatchNotFoundError } from "../../src/batches/batch-errors.js";
import { BATCH_STATES, BatchStore, isCancellable } from "../../src/batches/batch-store.js";
import { batchKeys, keyspace } from "../../src/redis/keys.js";
import { batchRowOf } from "../../src/results/batch-row.js";
import { RESULT_KINDS, type ResultKind } from "../../src/results/job-result.js";
import { ResultsStore } from "../../src/results/results-store.js";
import { useTestRedis } from "../helpers/redis.js";

const redis = useTestRedis("batchstore");
const ACCOUNT = "acct";

/** A store and a results store under their own prefix, so each test starts empty. */
function open(name: string) {
  const connection = redis.connect();
  const prefix = `${redis.prefix}:${name}`;
  const results = new ResultsStore(connection, { prefix, retentionMs: 60_000, maxLen: 1000 });
  const store = new BatchStore(connection, prefix, results);
  return { connection, prefix, store, results };
}

/** Begins a submission of `batchId` with `accepted` rows, as Batches does; answers its token. */
async function begin(store: BatchStore, batchId: string, accepted: number, skipped = 0) {
  const token = `token-${batchId}`;
  const outcome = await store.begin(ACCOUNT, batchId, { token, ms: 30_000 }, "digest-1", {
    id: batchId,
    account: ACCOUNT,
    kind: "bank-payouts",
    state: "validating",
    rows: accepted + skipped,
    digest: "digest-1",
    createdAt: "2026-11-21T00:00:00.000Z",
    done: 0,
    ...Object.fromEntries(RESULT_KINDS.map((k) => [`n:${k}`, 0])),
    accepted,
    invalid: skipped,
    duplicates: 0,
    skipped,
  });
  expect(outcome).toBe("created");
  return token;
}

function resultOf(batchId: string, row: number, result: ResultKind) {
  return {
    jobId: `${batchId}-j${row}`,
    kind: "payout.bank",
    account: ACCOUNT,
    idempotencyKey: `${batchId}-key-${row}`,
    batchId,
    row,
    reference: `ref-${row}`,
    result,
    attempts: 1,
    enqueuedAt: "2026-11-21T00:00:00.000Z",
    finishedAt: "2026-11-21T00:00:01.000Z",
    durationMs: 1000,
  };
}

describe("BatchStore: the batch state machine", () => {
  it("goes validating → queued → running → completed as the rows' results come in", async () => {
    const { store, results } = open("complete");
    const token = await begin(store, "b1", 2);
    expect((await store.meta(ACCOUNT, "b1")).state).toBe("validating");
    expect(await store.queued(ACCOUNT, "b1", token)).toBe("queued");
    await results.emit(resultOf("b1", 1, "succeeded"));
    expect((await store.meta(ACCOUNT, "b1")).state).toBe("running");
    await results.emit(resultOf("b1", 2, "succeeded"));
    const meta = await store.meta(ACCOUNT, "b1");
    expect(meta).toMatchObject({ state: "completed", done: "2", "n:succeeded": "2" });
    expect(meta.finishedAt).toBe("2026-11-21T00:00:01.000Z");
  });

  it("ends completed_with_failures when a row failed or a row was skipped", async () => {
    const { store, results } = open("failures");
    await store.queued(ACCOUNT, "b1", await begin(store, "b1", 2));
    await results.emit(resultOf("b1", 1, "succeeded"));
    await results.emit(resultOf("b1", 2, "failed"));
    expect((await store.meta(ACCOUNT, "b1")).state).toBe("completed_with_failures");

    await store.queued(ACCOUNT, "b2", await begin(store, "b2", 1, 1));
    await results.emit(resultOf("b2", 1, "succeeded"));
    expect((await store.meta(ACCOUNT, "b2")).state).toBe("completed_with_failures");
  });

  it("runs from the first result, even one that comes in while the batch is validating", async () => {
    const { store, results } = open("early");
    const token = await begin(store, "b1", 2);
    await results.emit(resultOf("b1", 1, "succeeded"));
    expect(await store.meta(ACCOUNT, "b1")).toMatchObject({
      state: "running",
      startedAt: "2026-11-21T00:00:01.000Z",
    });
    // Ending validation leaves a batch that runs already as it is.
    expect(await store.queued(ACCOUNT, "b1", token)).toBe("running");
    expect((await store.meta(ACCOUNT, "b1")).state).toBe("running");
  });

  it("finishes when validation ends with no accepted row left to run", async () => {
    const { store } = open("empty");
    expect(await store.queued(ACCOUNT, "b1", await begin(store, "b1", 0))).toBe("completed");
    expect(await store.queued(ACCOUNT, "b2", await begin(store, "b2", 0, 1))).toBe(
      "completed_with_failures",
    );
  });

  it("ends validation only for the holder of the submission's lease", async () => {
    const { store } = open("lease");
    await begin(store, "b1", 1);
    expect(await store.queued(ACCOUNT, "b1", "another-token")).toBe("lost");
    expect((await store.meta(ACCOUNT, "b1")).state).toBe("validating");
  });

  it("counts a row's result once, however often it is emitted", async () => {
    const { store, results } = open("once");
    await store.queued(ACCOUNT, "b1", await begin(store, "b1", 2));
    const first = resultOf("b1", 1, "succeeded");
    expect(await Promise.all([results.emit(first), results.emit(first)])).toEqual([true, false]);
    expect(await results.emit(first)).toBe(false);
    const meta = await store.meta(ACCOUNT, "b1");
    expect(meta).toMatchObject({ state: "running", done: "1", "n:succeeded": "1" });
  });

  it("cancels a batch while it is validating, queued or running, and stays cancelled to the end", async () => {
    const { store, results } = open("cancel");
    await begin(store, "v", 1);
    expect(await store.cancel(ACCOUNT, "v")).toBe("validating");

    await store.queued(ACCOUNT, "q", await begin(store, "q", 1));
    expect(await store.cancel(ACCOUNT, "q")).toBe("queued");

    await store.queued(ACCOUNT, "r", await begin(store, "r", 2));
    await results.emit(resultOf("r", 1, "succeeded"));
    expect(await store.cancel(ACCOUNT, "r")).toBe("running");
    const cancelled = await store.meta(ACCOUNT, "r");
    expect(cancelled.state).toBe("cancelled");
    expect(cancelled.cancelledAt).toBeDefined();
    await results.emit(resultOf("r", 2, "cancelled"));
    const meta = await store.meta(ACCOUNT, "r");
    expect(meta).toMatchObject({ state: "cancelled", done: "2", "n:cancelled": "1" });
    expect(meta.finishedAt).toBe("2026-11-21T00:00:01.000Z");
  });

  it("refuses to cancel a finished batch, a cancelled one, or one the account does not have", async () => {
    const { store, results } = open("refuse");
    await store.queued(ACCOUNT, "done", await begin(store, "done", 1));
    await results.emit(resultOf("done", 1, "succeeded"));
    await expect(store.cancel(ACCOUNT, "done")).rejects.toBeInstanceOf(BatchNotCancellableError);
    expect((await store.meta(ACCOUNT, "done")).state).toBe("completed");

    await store.queued(ACCOUNT, "twice", await begin(store, "twice", 1));
    await store.cancel(ACCOUNT, "twice");
    await expect(store.cancel(ACCOUNT, "twice")).rejects.toBeInstanceOf(BatchNotCancellableError);

    await expect(store.cancel(ACCOUNT, "none")).rejects.toBeInstanceOf(BatchNotFoundError);
    await expect(store.cancel("other-account", "done")).rejects.toBeInstanceOf(BatchNotFoundError);
  });

  it("answers which states can be cancelled", () => {
    expect(BATCH_STATES.filter(isCancellable)).toEqual([
      "validating",
      "awaiting_approval",
      "scheduled",
      "queued",
      "running",
    ]);
    expect(isCancellable("unknown")).toBe(false);
  });

  it("writes a result's batch row only for a job of a batch", () => {
    const prefix = "p";
    const keys = batchKeys(keyspace(prefix), ACCOUNT, "b1");
    expect(batchRowOf(keyspace(prefix), resultOf("b1", 3, "failed"))).toEqual({
      meta: keys.meta,
      rows: keys.rows,
      line: JSON.stringify({
        row: 3,
        reference: "ref-3",
        idempotencyKey: "b1-key-3",
        result: "failed",
        error: "",
      }),
    });
    const { batchId: _, row: __, ...alone } = resultOf("b1", 3, "failed");
    expect(batchRowOf(keyspace(prefix), alone)).toBeUndefined();
  });
});

describe("BatchStore: the accounts listed as having unsealed batches", () => {
  it("lists an account when a batch begins, and unlists it once it has none", async () => {
    const { store } = open("listed");
    expect(await store.listedUnsealed()).toEqual([]);
    await begin(store, "u1", 1);
    expect(await store.listedUnsealed()).toEqual([ACCOUNT]);
    await store.unlistUnsealed(ACCOUNT);
    // Still unsealed: unlisting reads the batches again and lists it back.
    expect(await store.listedUnsealed()).toEqual([ACCOUNT]);
    await store.forgetUnsealed(ACCOUNT, "u1");
    await store.unlistUnsealed(ACCOUNT);
    expect(await store.listedUnsealed()).toEqual([]);
  });
});

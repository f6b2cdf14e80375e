import { randomUUID } from "node:crypto";
import { jobIdFor } from "../queues/idempotency-key.js";
import { unitsOf } from "../queues/job-money.js";
import type { Producer } from "../queues/producer.js";
import { accountQueueName } from "../queues/queue-names.js";
import { type BatchCancelReason, CANCELLED_BY } from "../queues/work-holds.js";
import { bullKeys } from "../redis/bullmq-internals.js";
import type { RedisConnection } from "../redis/connection.js";
import type { ReportLine } from "../results/report-line.js";
import type { ResultCode } from "../results/result-codes.js";
import type { ResultsStore } from "../results/results-store.js";
import type { BatchKind } from "./batch-kinds.js";
import type { BatchState, BatchStore } from "./batch-store.js";
import { type RowEnding, rowResult } from "./row-result.js";
import { SubmissionLease } from "./submission-lease.js";

/** Unsealed batches of an account one sweep looks at; the rest wait for the next sweep. */
const SWEEP_BATCHES = 100;
/** Held jobs released at once after a seal. */
const RELEASE_CHUNK = 100;
/**
 * A sweep reads only the accounts listed as having unsealed batches, but every this many
 * passes (and the first) reads every account's: batches begun by an earlier release, or
 * whose listing failed, are found and listed then.
 */
const FULL_PASS_EVERY = 60;
/** Report lines whose job is looked for in one pipeline. */
const EXISTS_CHUNK = 1_000;

export interface UnsealedBatchesOptions {
  readonly connection: RedisConnection;
  readonly store: BatchStore;
  readonly producer: Producer;
  readonly results: ResultsStore;
  /** The submission lease's length: a clearing holds the lease as a submission would. */
  readonly leaseMs: number;
  /** Every report line of a batch, in row order. */
  readonly lines: (account: string, batchId: string) => AsyncIterable<ReportLine>;
}

/** What clearing a cancelled unsealed batch did. */
export interface Cleared {
  /** Rows given their `cancelled` result here: withdrawn, or never enqueued. */
  readonly cancelled: number;
  /** Rows whose job a worker holds: the gate ends each `cancelled`. */
  readonly inFlight: number;
  /** Rows that had their result already: a worker's gate ended the job after the cancel. */
  readonly finished: number;
}

/** A report line that names its row's job. */
type KeyedLine = ReportLine & { readonly idempotencyKey: string };

/**
 * The batches a submission has not sealed yet (docs/batches.md, "When a submission fails").
 * The rate gate holds their jobs; a job it meets is recorded in the batch's held set and
 * waits in the delayed set until the seal releases it (`releaseHeld`). A batch whose
 * submission stopped and was not resumed before its `sealBy` is cancelled by `sweep`, which
 * every moneyq process runs, and cleared: every row with a report line gets one `cancelled`
 * result (its job withdrawn, or its job never added), and rows the submission never reached
 * leave its counts and totals.
 */
export class UnsealedBatches {
  readonly #options: UnsealedBatchesOptions;
  readonly #redis: RedisConnection;
  #passes = 0;

  constructor(options: UnsealedBatchesOptions) {
    this.#options = options;
    this.#redis = options.connection;
  }

  /**
   * After the seal: the jobs the gate held while the batch was unsealed run at once (queued),
   * at its `notBefore` (scheduled); awaiting approval, they wait for it as every other job of
   * the batch. A job not released here (a crash) comes back at its `sealBy` by itself.
   */
  async releaseHeld(account: string, batchId: string, state: BatchState): Promise<void> {
    const keys = this.#options.store.keys(account, batchId);
    const ids = await this.#redis.smembers(keys.held);
    if (ids.length === 0) return;
    if (state === "queued" || state === "scheduled") {
      const notBefore = Number(await this.#redis.hget(keys.meta, "notBeforeMs"));
      const delayMs = Math.max(0, notBefore - Date.now() || 0);
      for (let i = 0; i < ids.length; i += RELEASE_CHUNK)
        await Promise.all(
          ids
            .slice(i, i + RELEASE_CHUNK)
            .map((id) => this.#options.producer.release(account, id, delayMs)),
        );
    }
    await this.#redis.del(keys.held);
  }

  /**
   * One pass over the unsealed batches of `accounts`: cancels each whose submission was
   * abandoned (ABANDON_SUBMISSION), and clears each cancelled one; forgets those sealed
   * meanwhile. Answers how many it cleared.
   */
  async sweep(accounts: readonly string[]): Promise<number> {
    const { store } = this.#options;
    const full = this.#passes % FULL_PASS_EVERY === 0;
    this.#passes += 1;
    const listed = full ? accounts : await this.#listed(accounts);
    let cleared = 0;
    for (const account of listed) {
      const unsealed = await store.unsealed(account, SWEEP_BATCHES);
      if (unsealed.length === 0) {
        if (!full) await store.unlistUnsealed(account);
        continue;
      }
      if (full) await store.listUnsealed(account);
      for (const batchId of unsealed) {
        const [state, sealBy] = await this.#redis.hmget(
          store.keys(account, batchId).meta,
          "state",
          "sealBy",
        );
        if (sealBy === null || (state !== "validating" && state !== "cancelled")) {
          await store.forgetUnsealed(account, batchId);
          continue;
        }
        if (state === "validating" && (await store.abandon(account, batchId)) !== "abandoned")
          continue;
        if (await this.clear(account, batchId)) cleared += 1;
      }
    }
    return cleared;
  }

  /** The accounts of `accounts` listed as having unsealed batches. */
  async #listed(accounts: readonly string[]): Promise<string[]> {
    const mine = new Set(accounts);
    return (await this.#options.store.listedUnsealed()).filter((a) => mine.has(a));
  }

  /**
   * Gives every row of a cancelled batch that was never sealed its result, holding the batch's
   * lease meanwhile (so no submission resumes it and no other process clears it at once):
   * withdrawn and never sent, or never enqueued, each ends `cancelled` for the batch's reason.
   * Undefined when the batch is not such a batch, or someone holds its lease (a submission
   * still under way, whose rows all get jobs; or another clearing).
   */
  async clear(account: string, batchId: string): Promise<Cleared | undefined> {
    const { store, leaseMs } = this.#options;
    const keys = store.keys(account, batchId);
    const token = randomUUID();
    if ((await this.#redis.set(keys.submitting, token, "PX", leaseMs, "NX")) !== "OK")
      return undefined;
    const lease = new SubmissionLease(
      this.#redis,
      { lease: keys.submitting, meta: keys.meta },
      token,
      leaseMs,
    );
    try {
      const meta = await store.meta(account, batchId);
      if (meta.state !== "cancelled" || meta.sealBy === undefined) return undefined;
      const enqueued = await this.#keepEnqueued(account, batchId, meta);
      const cleared = await this.#endRows(account, batchId, meta, enqueued);
      await this.#finishIfDone(keys.meta);
      await this.#redis.del(keys.held);
      await store.forgetUnsealed(account, batchId);
      return cleared;
    } finally {
      await lease.release();
    }
  }

  /**
   * The rows of the batch that were enqueued: a report line names their job, and the job
   * exists or has its result. A line whose job is missing was written just before a chunk's
   * enqueue that failed; `drop` answers those too.
   */
  async enqueuedRows(
    account: string,
    batchId: string,
  ): Promise<{ enqueued: KeyedLine[]; missing: KeyedLine[] }> {
    const enqueued: KeyedLine[] = [];
    const missing: KeyedLine[] = [];
    let queued: KeyedLine[] = [];
    const sort = async () => {
      const exist = await this.#jobsExist(account, queued);
      for (const [i, line] of queued.entries()) (exist[i] ? enqueued : missing).push(line);
      queued = [];
    };
    for await (const line of this.#options.lines(account, batchId)) {
      if (line.idempotencyKey === undefined) continue;
      if (line.result !== "queued") enqueued.push(line as KeyedLine);
      else queued.push(line as KeyedLine);
      if (queued.length >= EXISTS_CHUNK) await sort();
    }
    await sort();
    return { enqueued, missing };
  }

  /** Whether each line's job exists (one pipeline of EXISTS). */
  async #jobsExist(account: string, lines: readonly KeyedLine[]): Promise<boolean[]> {
    if (lines.length === 0) return [];
    const space = this.#options.store.keyspace;
    const queue = bullKeys.queue(space.prefix, accountQueueName(space, account));
    const pipeline = this.#redis.pipeline();
    for (const line of lines)
      pipeline.exists(bullKeys.job(queue, jobIdFor(account, line.idempotencyKey)));
    const answers = (await pipeline.exec()) ?? [];
    return answers.map(([error, found]) => {
      if (error) throw error;
      return found === 1;
    });
  }

  /**
   * Leaves in the batch only the rows that were enqueued: the report lines whose job was never
   * added go, and `accepted` and the requested and pending totals (written for every row at the
   * start) lose every row the submission did not enqueue. Answers the enqueued rows.
   */
  async #keepEnqueued(
    account: string,
    batchId: string,
    meta: Readonly<Record<string, string>>,
  ): Promise<KeyedLine[]> {
    const { enqueued, missing } = await this.enqueuedRows(account, batchId);
    const keys = this.#options.store.keys(account, batchId);
    for (let i = 0; i < missing.length; i += EXISTS_CHUNK)
      await this.#redis.hdel(
        keys.rows,
        ...missing.slice(i, i + EXISTS_CHUNK).map((l) => String(l.row)),
      );
    const dropped = Number(meta.accepted ?? 0) - enqueued.length;
    if (dropped <= 0) return enqueued;
    const kept = new Map<string, { rows: number; units: bigint }>();
    for (const line of enqueued) {
      if (line.currency === undefined || line.amount === undefined) continue;
      const scale = Number(meta[`t:${line.currency}:scale`] ?? 0);
      const sum = kept.get(line.currency) ?? { rows: 0, units: 0n };
      kept.set(line.currency, {
        rows: sum.rows + 1,
        units: sum.units + unitsOf(line.amount, scale),
      });
    }
    const multi = this.#redis.multi().hincrby(keys.meta, "accepted", -dropped);
    for (const field of Object.keys(meta)) {
      const currency = /^t:([A-Z]+):scale$/.exec(field)?.[1];
      if (currency === undefined) continue;
      const t = `t:${currency}:`;
      const own = kept.get(currency) ?? { rows: 0, units: 0n };
      const rows = Number(meta[`${t}requested:rows`] ?? 0) - own.rows;
      const units = BigInt(meta[`${t}requested:units`] ?? "0") - own.units;
      for (const bucket of ["requested", "pending"])
        multi
          .hincrby(keys.meta, `${t}${bucket}:rows`, -rows)
          .hincrby(keys.meta, `${t}${bucket}:units`, (-units).toString());
    }
    await multi.exec();
    return enqueued;
  }

  /** Ends every enqueued row still queued: withdrawn, `cancelled`; one a worker holds, left to the gate. */
  async #endRows(
    account: string,
    batchId: string,
    meta: Readonly<Record<string, string>>,
    enqueued: readonly KeyedLine[],
  ): Promise<Cleared> {
    const reasons: Readonly<Record<string, { code: ResultCode; message: string }>> =
      CANCELLED_BY.batch;
    const reason = (meta.cancelReason ?? "cancelled") as BatchCancelReason;
    const why = reasons[reason] ?? CANCELLED_BY.batch.cancelled;
    const ending: RowEnding = { result: "cancelled", ...why };
    const batch = { batchId, account, kind: meta.kind as BatchKind };
    const createdAt = meta.createdAt ?? new Date().toISOString();
    let cancelled = 0;
    let inFlight = 0;
    let finished = 0;
    for (const line of enqueued) {
      if (line.result !== "queued") {
        finished += 1;
        continue;
      }
      if (await this.#heldByWorker(account, line)) {
        inFlight += 1;
        continue;
      }
      await this.#options.results.emit(rowResult(batch, createdAt, line, ending));
      cancelled += 1;
    }
    return { cancelled, inFlight, finished };
  }

  /**
   * Withdraws the row's job; true when a worker holds it (its gate, finding the batch
   * cancelled, ends it). A job withdrawn was never sent: the batch was never sealed, so the gate
   * held it, whatever its runs say.
   */
  async #heldByWorker(account: string, line: KeyedLine): Promise<boolean> {
    const withdrawal = await this.#options.producer.withdraw(
      account,
      jobIdFor(account, line.idempotencyKey),
    );
    return withdrawal === "in_flight" || withdrawal === "sent";
  }

  /** A batch with every row's result in (none was left to a worker) is finished now. */
  async #finishIfDone(meta: string): Promise<void> {
    const [accepted, done] = await this.#redis.hmget(meta, "accepted", "done");
    if (Number(done ?? 0) >= Number(accepted ?? 0))
      await this.#redis.hsetnx(meta, "finishedAt", new Date().toISOString());
  }
}

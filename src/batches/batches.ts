import { redisContext } from "../redis/redis-context.js";
import type { ReportLine } from "../results/report-line.js";
import { BatchDecisions } from "./batch-decisions.js";
import { BatchIndex } from "./batch-index.js";
import type { BatchParts, BatchRedis } from "./batch-parts.js";
import { BatchQueries } from "./batch-queries.js";
import type {
  BatchesOptions,
  BatchStatus,
  CancelReport,
  DecisionReport,
  SubmitOptions,
  SubmitReport,
} from "./batch-reports.js";
import type { BatchState } from "./batch-store.js";
import { BatchStore } from "./batch-store.js";
import { BatchSubmission, leaseMsOf } from "./batch-submission.js";
import { UnsealedBatches } from "./unsealed-batches.js";

export { MAX_URGENT_BATCH_ROWS } from "./batch-submission.js";

/**
 * Bulk batches: every row validated before anything is enqueued, keys derived from account,
 * batch id and reference, duplicates refused (in the file and against earlier batches of
 * the account), a state with counters kept by the results script, a report, and cancel. Its
 * parts share one connection and store: the submission (batch-submission.ts), what is read
 * of a batch (batch-queries.ts) and what is decided on it (batch-decisions.ts).
 */
export class Batches {
  readonly #submission: BatchSubmission;
  readonly #queries: BatchQueries;
  readonly #decisions: BatchDecisions;
  readonly #unsealed: UnsealedBatches;

  constructor(options: BatchesOptions) {
    const redis = options.connection;
    const store = new BatchStore(redis, options.prefix, options.results);
    const unsealed = new UnsealedBatches({
      connection: redis,
      store,
      producer: options.producer,
      results: options.results,
      leaseMs: leaseMsOf(options),
      lines: (account, batchId) => this.#queries.allLines(account, batchId),
    });
    const parts: BatchParts = {
      redis: redis as BatchRedis,
      options,
      store,
      index: new BatchIndex(redis, options.prefix),
      replicas: redisContext(redis, options.prefix).replicas,
      unsealed,
    };
    this.#unsealed = unsealed;
    this.#queries = new BatchQueries(parts);
    this.#submission = new BatchSubmission(parts, this.#queries);
    this.#decisions = new BatchDecisions(parts, this.#queries);
  }

  /**
   * Cancels the batches of `accounts` whose submission stopped and was not resumed before
   * their `sealBy`, and gives each row its `cancelled` result (docs/batches.md, "When a
   * submission fails"). Every moneyq process runs it now and then; answers how many it cleared.
   */
  sweepUnsealed(accounts: readonly string[]): Promise<number> {
    return this.#unsealed.sweep(accounts);
  }

  /**
   * Validates every row, then (unless a dry run) enqueues the batch. Throws BatchRefusedError
   * listing every bad row when any row is invalid or a duplicate and `allowPartial` is off.
   */
  submit(options: SubmitOptions): Promise<SubmitReport> {
    return this.#submission.submit(options);
  }

  /** The state and counters of the account's batch; BatchNotFoundError if it has none. */
  status(account: string, batchId: string): Promise<BatchStatus> {
    return this.#queries.status(account, batchId);
  }

  /**
   * The newest batches of `accounts` in one of `states` (any when empty), at most `limit`;
   * `more` when others may match.
   */
  list(
    accounts: readonly string[],
    states: readonly BatchState[],
    limit: number,
  ): Promise<{ batches: BatchStatus[]; more: boolean }> {
    return this.#queries.list(accounts, states, limit);
  }

  /**
   * The account whose batch `batchId` is, among `accounts`: BatchNotFoundError if none has it,
   * BatchAmbiguousError if several do.
   */
  accountOf(batchId: string, accounts: readonly string[]): Promise<string> {
    return this.#queries.accountOf(batchId, accounts);
  }

  /** Which of `accounts` have a batch `batchId`, in their order. */
  accountsWith(batchId: string, accounts: readonly string[]): Promise<string[]> {
    return this.#queries.accountsWith(batchId, accounts);
  }

  /** Every row's report line, in row order, read in chunks. */
  report(account: string, batchId: string): AsyncGenerator<ReportLine> {
    return this.#queries.report(account, batchId);
  }

  /** The report's lines, the batch looked up first (BatchNotFoundError before any line). */
  openReport(account: string, batchId: string): Promise<AsyncGenerator<ReportLine>> {
    return this.#queries.openReport(account, batchId);
  }

  /** Cancels a batch: no job not yet sent is sent; each ends `cancelled`. */
  cancel(account: string, batchId: string): Promise<CancelReport> {
    return this.#decisions.cancel(account, batchId);
  }

  /** Approves a batch awaiting approval, as `approver`, and releases its jobs. */
  approve(account: string, batchId: string, approver: string): Promise<DecisionReport> {
    return this.#decisions.approve(account, batchId, approver);
  }

  /** Rejects a batch awaiting approval, as `approver`: every job ends `cancelled`. */
  reject(account: string, batchId: string, approver: string): Promise<DecisionReport> {
    return this.#decisions.reject(account, batchId, approver);
  }
}

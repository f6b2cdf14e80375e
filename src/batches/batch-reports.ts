import type { ApprovalPolicy } from "../config/load-config.js";
import type { BalanceSource } from "../provider/read-balances.js";
import type { JobPriority } from "../queues/lanes.js";
import type { Producer } from "../queues/producer.js";
import type { RedisConnection } from "../redis/connection.js";
import type { ResultKind } from "../results/job-result.js";
import type { ResultsStore } from "../results/results-store.js";
import type { RowIssue } from "./batch-errors.js";
import type { BatchKind } from "./batch-kinds.js";
import type { RepeatReport } from "./batch-repeats.js";
import type { RowSource } from "./batch-rows.js";
import type { BatchState } from "./batch-store.js";
import type { BatchTotals } from "./batch-totals.js";
import type { FundsReport } from "./funds-check.js";

// What Batches answers and takes: a batch's status, the reports of a submission, a cancel and a
// decision, and its options.
export interface BatchStatus {
  readonly batchId: string;
  readonly account: string;
  readonly kind: BatchKind;
  readonly state: BatchState;
  /** Rows in the file. */
  readonly rows: number;
  /**
   * Rows enqueued; the others were invalid or duplicates (accepted with allowPartial). While
   * `validating`, every row the submission is enqueueing; `submission_failed`, the rows it
   * enqueued before it stopped.
   */
  readonly accepted: number;
  readonly invalid: number;
  readonly duplicates: number;
  /** Accepted rows with a terminal result. */
  readonly finished: number;
  readonly counts: Readonly<Record<ResultKind, number>>;
  /** finished / accepted, 0 to 1. */
  readonly progress: number;
  readonly createdAt: string;
  readonly startedAt: string | undefined;
  readonly finishedAt: string | undefined;
  readonly cancelledAt: string | undefined;
  /** Why it was cancelled: `cancelled` (an operator), `rejected`, `approval_expired`. */
  readonly cancelReason: string | undefined;
  /** From creation to the last result (or to now while running). */
  readonly durationMs: number;
  /** Per currency of its rows: requested, pending, and each result's rows and amount. */
  readonly totals: BatchTotals;
  /** Nothing is sent before this instant (ISO time), when the batch was given one. */
  readonly notBefore: string | undefined;
  /** The token (or `cli`) that submitted it. */
  readonly submittedBy: string | undefined;
  /**
   * While unsealed (`validating`, `submission_failed`): the instant after which the batch, if
   * no submission holds it then, is cancelled (`submission_abandoned`). Resubmit the same
   * file before it to resume the submission.
   */
  readonly resumeBy: string | undefined;
  /**
   * The rows whose payment repeated another one when it was submitted (the first 1,000, and
   * how many), when any did: what its approvers weigh.
   */
  readonly repeats: RepeatReport | undefined;
  /** Its approval, when its account's policy asked for one. */
  readonly approval:
    | {
        readonly state: "pending" | "approved" | "rejected" | "expired";
        readonly expiresAt: string | undefined;
        readonly decidedBy: string | undefined;
        readonly decidedAt: string | undefined;
      }
    | undefined;
}

export interface SubmitOptions {
  readonly account: string;
  readonly kind: BatchKind;
  readonly source: RowSource;
  /** Validate and report only; nothing is written. */
  readonly dryRun?: boolean;
  /** Enqueue the valid rows and report the others, instead of refusing the batch whole. */
  readonly allowPartial?: boolean;
  /** Default: derived from account, kind and content, so the same file is the same batch. */
  readonly batchId?: string;
  /** Stops waiting for another submission of the batch (the client went away). */
  readonly signal?: AbortSignal;
  /** Nothing of the batch is sent before this instant; default: as soon as it may. */
  readonly notBefore?: Date;
  /** Who submits it (a token's name, or `cli`): the one who may not approve it. */
  readonly submittedBy?: string;
  /**
   * The lane of its jobs: `bulk` (the default), or `urgent` for a few rows that must not wait
   * behind a payroll on the account (docs/pipeline.md, "Lanes").
   */
  readonly priority?: JobPriority;
}

export interface SubmitReport {
  readonly batchId: string;
  readonly dryRun: boolean;
  /** False when this batch had been submitted before: nothing new was enqueued. */
  readonly created: boolean;
  readonly rows: number;
  readonly accepted: number;
  readonly invalid: number;
  readonly duplicates: number;
  /** Every invalid or duplicate row, with its column and rule. */
  readonly issues: readonly RowIssue[];
  /**
   * The rows whose payment repeats another one (paid or queued under another key in the
   * window, or an earlier row of the file), and the account's policy (docs/safety.md).
   */
  readonly repeats: RepeatReport;
  /**
   * On a dry run of stable payouts: what each sub-account, currency and network needs against
   * the balance the provider reports (docs/safety.md); absent otherwise.
   */
  readonly funds?: FundsReport | undefined;
  /** The batch's status; absent on a dry run. */
  readonly status: BatchStatus | undefined;
}

export interface CancelReport {
  readonly batchId: string;
  /** Jobs removed before they were sent: their result is `cancelled`. */
  readonly cancelled: number;
  /**
   * Jobs being processed at the time, or confirming a request that left: each ends `cancelled`
   * if its request had not left yet, else as the provider says.
   */
  readonly inFlight: number;
  /**
   * Jobs that already had their terminal result, and those removed whose earlier attempt may
   * have reached the provider: `needs_reconciliation`, code `cancelled_maybe_sent`.
   */
  readonly finished: number;
  readonly status: BatchStatus;
}

export interface BatchesOptions {
  readonly connection: RedisConnection;
  readonly prefix: string;
  readonly producer: Producer;
  readonly results: ResultsStore;
  /** How long a submission holds its batch without renewing; default SUBMIT_LEASE_MS. */
  readonly submitLeaseMs?: number;
  /** How long a submission waits for another one of the same batch; default SUBMIT_WAIT_MS. */
  readonly submitWaitMs?: number;
  /** Each account's approval policy (config.approvals); an account without one needs none. */
  readonly approvals?: ReadonlyMap<string, ApprovalPolicy>;
  /** Sub-account balances at the provider, for a dry run's funds check; none: "not verified". */
  readonly balances?: BalanceSource | undefined;
}

/** The outcome of a decision on a batch awaiting approval. */
export interface DecisionReport {
  readonly batchId: string;
  /** Jobs released to run (approved), or removed with a `cancelled` result (rejected). */
  readonly jobs: number;
  readonly status: BatchStatus;
}

// The pipeline: attempts, confirmation, retention, locks, shutdown, the process's budgets.
import type { EnvReader } from "./env-reader.js";
import { wholeNumber } from "./rules.js";

export interface PipelineConfig {
  /** Submissions of one job before its outcome is looked up. */
  readonly maxAttempts: number;
  /** How long a PENDING outcome is confirmed before it needs reconciliation. */
  readonly confirmDeadlineMs: number;
  /** The first lookup after a PENDING answer waits this long; each next one twice as long. */
  readonly confirmFirstDelayMs: number;
  /** Approximate length the results stream is trimmed to. */
  readonly resultsMaxLen: number;
  /** How long results, and finished jobs, are kept. */
  readonly retentionMs: number;
  /** Each second of an account's rate is stretched by this much, for jitter between a slot and arrival. */
  readonly rateWindowMarginMs: number;
  /** A worker's lock on an active job; a dead worker's jobs are recovered after it. */
  readonly lockDurationMs: number;
  /** How often workers look for jobs whose worker died. */
  readonly stalledIntervalMs: number;
  /** How long shutdown waits for active jobs before handing them back. */
  readonly shutdownGraceMs: number;
  /**
   * Jobs in progress in one process across its accounts, shared among the busy ones (never
   * under one each): processors/in-progress-budget.ts.
   */
  readonly maxJobsInProgress: number;
  /**
   * Accounts one process runs a worker for at once: only accounts with work get one
   * (processors/account-turns.ts), so this bounds the process's Redis connections.
   */
  readonly maxActiveAccounts: number;
}

export function readPipeline(read: EnvReader): PipelineConfig {
  return Object.freeze({
    maxAttempts: read.int("MONEYQ_MAX_ATTEMPTS"),
    confirmDeadlineMs: read.int("MONEYQ_CONFIRM_DEADLINE_MS"),
    confirmFirstDelayMs: read.int("MONEYQ_CONFIRM_FIRST_DELAY_MS"),
    resultsMaxLen: read.int("MONEYQ_RESULTS_MAXLEN"),
    retentionMs: read.int("MONEYQ_RETENTION_MS"),
    rateWindowMarginMs: read.int("MONEYQ_RATE_WINDOW_MARGIN_MS", wholeNumber),
    lockDurationMs: read.int("MONEYQ_LOCK_DURATION_MS"),
    stalledIntervalMs: read.int("MONEYQ_STALLED_INTERVAL_MS"),
    shutdownGraceMs: read.int("MONEYQ_SHUTDOWN_GRACE_MS", wholeNumber),
    maxJobsInProgress: read.int("MONEYQ_MAX_JOBS_IN_PROGRESS"),
    maxActiveAccounts: read.int("MONEYQ_MAX_ACTIVE_ACCOUNTS"),
  });
}

import type { FieldIssue } from "../contract/field-issues.js";
import { formatFieldIssues } from "../contract/field-issues.js";
import { MoneyqError } from "../errors/moneyq-error.js";
import type { PaymentMatch } from "./payment-repeats.js";

/** A job refused at enqueue: every field issue, with its path inside the job. */
export class EnqueueValidationError extends MoneyqError {
  readonly code = "invalid_job";
  readonly issues: readonly FieldIssue[];
  /** Index of the job in an enqueueMany call. */
  readonly index: number | undefined;

  constructor(issues: readonly FieldIssue[], index?: number) {
    super(`${index === undefined ? "job" : `job ${index}`}: ${formatFieldIssues(issues)}`);
    this.issues = issues;
    this.index = index;
  }
}

/** A key already holds a different request: the IETF idempotency-key draft's 409 (a conflict, never a second job). */
export class IdempotencyKeyReusedError extends MoneyqError {
  readonly code = "idempotency_key_reused";
  /** The job the key belongs to. */
  readonly jobId: string;
  readonly idempotencyKey: string;
  /** Index of the job in an enqueueMany call. */
  readonly index: number | undefined;

  constructor(jobId: string, idempotencyKey: string, index?: number) {
    super(
      `idempotency key "${idempotencyKey}" was already used for job ${jobId} with a different request`,
    );
    this.jobId = jobId;
    this.idempotencyKey = idempotencyKey;
    this.index = index;
  }
}

/**
 * A payment its account's policy refuses to make again: the same kind, beneficiary, amount
 * and currency was paid, or is queued, under another key within the window (docs/safety.md).
 */
export class PaymentRepeatedError extends MoneyqError {
  readonly code = "payment_repeated";
  /** The other payments, newest first. */
  readonly matches: readonly PaymentMatch[];
  /** The rule, as a field issue names it. */
  readonly rule: string;

  constructor(matches: readonly PaymentMatch[], rule: string) {
    super(`request.body: ${rule}`);
    this.matches = matches;
    this.rule = rule;
  }
}

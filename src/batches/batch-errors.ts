import { MoneyqError } from "../errors/moneyq-error.js";

/** One broken rule in one row of a batch: `column` is a column name ("" for the whole row). */
export interface RowIssue {
  /** `duplicate`: the row's reference is used by an earlier row or batch. */
  readonly type: "invalid" | "duplicate";
  readonly row: number;
  readonly reference: string | undefined;
  readonly column: string;
  readonly rule: string;
}

/**
 * A batch file that cannot be read at all: wrong header, malformed CSV, a line starting with #
 * after the header (`commented_line`: a row that might be meant, never skipped), no rows.
 */
export class BatchFileError extends MoneyqError {
  readonly code:
    | "invalid_header"
    | "invalid_csv"
    | "commented_line"
    | "invalid_rows"
    | "empty_batch"
    | "too_large";
  readonly problems: readonly string[];
  constructor(code: BatchFileError["code"], problems: readonly string[]) {
    super(problems.join("; "));
    this.code = code;
    this.problems = problems;
  }
}

/** A batch refused whole because some rows are invalid or duplicates; nothing was enqueued. */
export class BatchRefusedError extends MoneyqError {
  readonly code = "batch_refused";
  readonly issues: readonly RowIssue[];
  readonly rows: number;
  constructor(rows: number, issues: readonly RowIssue[]) {
    const bad = new Set(issues.map((i) => i.row)).size;
    super(
      `batch refused: ${bad} of ${rows} rows are invalid or duplicates; nothing was enqueued ` +
        "(fix them, or accept the valid rows with allowPartial)",
    );
    this.rows = rows;
    this.issues = issues;
  }
}

/** No batch with this id belongs to the caller's accounts. */
export class BatchNotFoundError extends MoneyqError {
  readonly code = "batch_not_found";
  readonly batchId: string;
  constructor(batchId: string) {
    super(`no batch ${batchId}`);
    this.batchId = batchId;
  }
}

/** A batch id that several of the caller's accounts have: the caller must name the account. */
export class BatchAmbiguousError extends MoneyqError {
  readonly code = "batch_ambiguous";
  readonly batchId: string;
  readonly accounts: readonly string[];
  constructor(batchId: string, accounts: readonly string[]) {
    super(`batch ${batchId} exists in ${accounts.join(", ")}: name the account`);
    this.batchId = batchId;
    this.accounts = accounts;
  }
}

/** A batch that may not be cancelled (it already finished). */
export class BatchNotCancellableError extends MoneyqError {
  readonly code = "batch_not_cancellable";
  constructor(batchId: string, state: string) {
    super(`batch ${batchId} is ${state}: there is nothing left to cancel`);
  }
}

/** A batch id the account already used for another file: reusing it would mix two files. */
export class BatchIdReusedError extends MoneyqError {
  readonly code = "batch_id_reused";
  constructor(batchId: string) {
    super(
      `batch id ${batchId} is already used by another file of this account: ` +
        "give this file its own batchId (resubmitting the same file under the same id is safe)",
    );
  }
}

/**
 * Another submission of the batch is under way and did not finish in time, or took the batch
 * over from this one (this one held it too long): the batch's status tells the outcome.
 */
export class BatchSubmissionBusyError extends MoneyqError {
  readonly code = "submission_under_way";
  constructor(batchId: string, reason: "waited" | "taken_over") {
    super(
      reason === "waited"
        ? `batch ${batchId}: another submission of it is under way; try again later or read its status`
        : `batch ${batchId}: another submission took it over before this one finished; read its status`,
    );
  }
}

/**
 * A decision on a batch that cannot be taken: it is not awaiting approval (`not_awaiting`),
 * its approval expired (`approval_expired`), or the decider submitted it (`own_batch`: the
 * person who submits a batch never approves it).
 */
export class BatchDecisionError extends MoneyqError {
  readonly code: "not_awaiting_approval" | "approval_expired" | "own_batch";
  constructor(batchId: string, reason: "not_awaiting" | "expired" | "own_batch", state?: string) {
    super(
      reason === "not_awaiting"
        ? `batch ${batchId} is ${state}, not awaiting approval: there is nothing to decide`
        : reason === "expired"
          ? `batch ${batchId}: its approval expired; submit it again`
          : `batch ${batchId} was submitted by this token: another one must approve or reject it`,
    );
    this.code =
      reason === "not_awaiting"
        ? "not_awaiting_approval"
        : reason === "expired"
          ? "approval_expired"
          : "own_batch";
  }
}

/**
 * A batch option that breaks its rule: a `notBefore` that is not a time or is too far ahead,
 * or an urgent `priority` on a batch larger than MAX_URGENT_BATCH_ROWS.
 */
export class BatchOptionError extends MoneyqError {
  readonly code = "invalid_option";
  readonly field: "notBefore" | "priority";
  readonly rule: string;
  constructor(field: BatchOptionError["field"], rule: string) {
    super(`${field}: ${rule}`);
    this.field = field;
    this.rule = rule;
  }
}

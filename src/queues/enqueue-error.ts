import type { FieldIssue } from "../contract/field-issues.js";
import { formatFieldIssues } from "../contract/field-issues.js";

/** A job refused at enqueue: every field issue, with its path inside the job. */
export class EnqueueValidationError extends Error {
  readonly code = "invalid_job";
  readonly issues: readonly FieldIssue[];
  /** Index of the job in an enqueueMany call. */
  readonly index: number | undefined;

  constructor(issues: readonly FieldIssue[], index?: number) {
    super(`${index === undefined ? "job" : `job ${index}`}: ${formatFieldIssues(issues)}`);
    this.name = "EnqueueValidationError";
    this.issues = issues;
    this.index = index;
  }
}

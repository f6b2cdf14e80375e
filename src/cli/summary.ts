import type { RowIssue } from "../batches/batch-errors.js";
import type { BatchStatus, SubmitReport } from "../batches/batches.js";
import { RESULT_KINDS } from "../results/job-result.js";

/** One line per bad row: `row 7 (ref-7): amount: must be a number`. */
export function formatIssues(issues: readonly RowIssue[]): string {
  return issues
    .map(
      (i) =>
        `  row ${i.row}${i.reference ? ` (${i.reference})` : ""}: ${i.column ? `${i.column}: ` : ""}${i.rule}`,
    )
    .join("\n");
}

export function formatSubmit(report: SubmitReport): string {
  const head = report.dryRun
    ? `dry run of batch ${report.batchId}: nothing was enqueued`
    : report.created
      ? `batch ${report.batchId} enqueued`
      : `batch ${report.batchId} was submitted before: nothing new enqueued`;
  const lines = [
    head,
    `  rows ${report.rows}, accepted ${report.accepted}, invalid ${report.invalid}, duplicates ${report.duplicates}`,
  ];
  if (report.issues.length > 0) lines.push("rows not enqueued:", formatIssues(report.issues));
  return lines.join("\n");
}

/** The summary table of a batch. */
export function formatStatus(status: BatchStatus): string {
  const rows: [string, string | number][] = [
    ["batch", status.batchId],
    ["kind", status.kind],
    ["account", status.account],
    ["state", status.state],
    ["rows", status.rows],
    ["accepted", status.accepted],
    ["invalid", status.invalid],
    ["duplicates", status.duplicates],
    ...RESULT_KINDS.map((k): [string, number] => [k, status.counts[k]]),
    ["progress", `${Math.round(status.progress * 100)}%`],
    ["duration", `${(status.durationMs / 1000).toFixed(1)} s`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join("\n");
}

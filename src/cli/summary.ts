import type { RowIssue } from "../batches/batch-errors.js";
import { type BatchTotals, TOTAL_BUCKETS } from "../batches/batch-totals.js";
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
    ...(status.notBefore !== undefined
      ? [["not before", status.notBefore] as [string, string]]
      : []),
    ...(status.approval !== undefined
      ? [["approval", approvalText(status.approval)] as [string, string]]
      : []),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const table = rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join("\n");
  return Object.keys(status.totals).length === 0
    ? table
    : `${table}\n${totalsTable(status.totals)}`;
}

function approvalText(approval: NonNullable<BatchStatus["approval"]>): string {
  const by = approval.decidedBy === undefined ? "" : ` by ${approval.decidedBy}`;
  const until =
    approval.state === "pending" && approval.expiresAt ? ` until ${approval.expiresAt}` : "";
  return `${approval.state}${by}${until}`;
}

/** Per currency, rows and amount of each total, as a table under the status. */
function totalsTable(totals: BatchTotals): string {
  const header = ["currency", ...TOTAL_BUCKETS];
  const lines = Object.entries(totals).map(([currency, t]) => [
    currency,
    ...TOTAL_BUCKETS.map((b) => `${t[b].rows} / ${t[b].amount}`),
  ]);
  const widths = header.map((h, i) =>
    Math.max(h.length, ...lines.map((l) => (l[i] as string).length)),
  );
  return [header, ...lines]
    .map((cells) => `  ${cells.map((c, i) => c.padEnd(widths[i] as number)).join("  ")}`.trimEnd())
    .join("\n");
}

import type { RowIssue } from "../batches/batch-errors.js";
import type { RepeatReport } from "../batches/batch-repeats.js";
import type { BatchStatus, SubmitReport } from "../batches/batch-reports.js";
import { type BatchTotals, TOTAL_BUCKETS } from "../batches/batch-totals.js";
import type { FundsReport } from "../batches/funds-check.js";
import { windowText } from "../queues/payment-repeats.js";
import { matchText } from "../queues/repeat-rule.js";
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
  if (report.repeats.count > 0) lines.push(formatRepeats(report.repeats));
  if (report.funds !== undefined && report.funds.lines.length > 0)
    lines.push(formatFunds(report.funds));
  return lines.join("\n");
}

/**
 * A stable batch's needs against the provider's balances: `sub_1 USDT on polygon: 12 rows need
 * 1500.5, available 1000: short by 500.5 (verified)`, one line per sub-account and currency.
 */
export function formatFunds(funds: FundsReport): string {
  const head = {
    enough: "funds: enough for every row (verified: read from the provider's balances)",
    short: "funds: SHORT (verified: read from the provider's balances)",
    not_verified: "funds: not verified",
  }[funds.state];
  const lines = funds.lines.map((l) => {
    const what = `  ${l.subAccountId} ${l.currency || "(no currency)"} on ${l.network || "(no network)"}: ${l.rows} rows need ${l.needed}`;
    if (l.state === "not_verified") return `${what}: not verified (${l.why})`;
    const verdict = l.state === "short" ? `short by ${l.short}` : "enough";
    return `${what}, available ${l.available}: ${verdict} (verified)`;
  });
  return [`${head}; the provider's fees are not counted:`, ...lines].join("\n");
}

/**
 * The rows whose payment repeats another one, under the account's policy: `row 12 (ref-12):
 * paid 2026-11-26 in batch b_1 row 4`, one line a match.
 */
export function formatRepeats(repeats: RepeatReport): string {
  const what = {
    warn: "reported, not held",
    hold: "the batch waits for approval",
    refuse: "those rows are invalid",
  }[repeats.policy];
  const head = `${repeats.count} rows repeat a payment of the last ${windowText(repeats.windowMs)} (policy ${repeats.policy}: ${what}):`;
  const lines = repeats.rows.flatMap((r) =>
    r.matches.map((m) => `  row ${r.row} (${r.reference}): ${matchText(m)}`),
  );
  const kept =
    repeats.rows.length < repeats.count ? [`  (the first ${repeats.rows.length} rows)`] : [];
  return [head, ...lines, ...kept].join("\n");
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
    ...(status.repeats !== undefined
      ? [
          ["repeats", `${status.repeats.count} rows (policy ${status.repeats.policy})`] as [
            string,
            string,
          ],
        ]
      : []),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const table = rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join("\n");
  const withTotals =
    Object.keys(status.totals).length === 0 ? table : `${table}\n${totalsTable(status.totals)}`;
  return status.repeats === undefined
    ? withTotals
    : `${withTotals}\n${formatRepeats(status.repeats)}`;
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

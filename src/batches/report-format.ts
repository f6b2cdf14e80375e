import type { ReportLine } from "../results/report-line.js";
import { type BatchTotals, TOTAL_BUCKETS } from "./batch-totals.js";
import { csvQuoted } from "./csv-quote.js";

const COLUMNS = [
  "row",
  "reference",
  "idempotency_key",
  "result",
  "upstream_id",
  "upstream_status",
  "error",
] as const;

/** A text cell starting with one of these is a formula to a spreadsheet. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A report cell, quoted as RFC 4180 says. A text cell that a spreadsheet would run as a
 * formula (=, +, -, @, tab, carriage return first) gets a leading ' so that it shows as text
 * (OWASP's advice on CSV injection).
 */
export function reportCell(value: string | number | undefined): string {
  let text = value === undefined ? "" : String(value);
  if (typeof value === "string" && FORMULA_START.test(text)) text = `'${text}`;
  return csvQuoted(text);
}

function reportCsvHeader(): string {
  return COLUMNS.join(",");
}

function reportCsvLine(line: ReportLine): string {
  return [
    line.row,
    line.reference,
    line.idempotencyKey,
    line.result,
    line.upstreamId,
    line.upstreamStatus,
    line.error,
  ]
    .map(reportCell)
    .join(",");
}

export type ReportFormat = "csv" | "jsonl";

/**
 * The batch's totals as note lines of a CSV report, one per currency, above its header (as a
 * batch file's notes are): `# NGN requested 12 rows 1278.00; pending 0 rows 0.00; ...`. No
 * commas, so a spreadsheet keeps each note in one cell.
 */
export function totalsNotes(totals: BatchTotals): string[] {
  return Object.entries(totals).map(
    ([currency, t]) =>
      `# ${currency} ${TOTAL_BUCKETS.map((b) => `${b} ${t[b].rows} rows ${t[b].amount}`).join("; ")}`,
  );
}

/**
 * The report as text lines, each ending in a newline: in CSV the totals' notes (`totalsNotes`)
 * and the header first; or JSON lines.
 */
export async function* renderReport(
  lines: AsyncIterable<ReportLine>,
  format: ReportFormat,
  totals: BatchTotals = {},
): AsyncGenerator<string> {
  if (format === "csv") {
    for (const note of totalsNotes(totals)) yield `${note}\n`;
    yield `${reportCsvHeader()}\n`;
  }
  for await (const line of lines)
    yield format === "csv" ? `${reportCsvLine(line)}\n` : `${JSON.stringify(line)}\n`;
}

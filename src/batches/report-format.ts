import type { ReportLine } from "../results/report-line.js";
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
function cell(value: string | number | undefined): string {
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
    .map(cell)
    .join(",");
}

export type ReportFormat = "csv" | "jsonl";

/** The report as text lines, each ending in a newline: a CSV header first, or JSON lines. */
export async function* renderReport(
  lines: AsyncIterable<ReportLine>,
  format: ReportFormat,
): AsyncGenerator<string> {
  if (format === "csv") yield `${reportCsvHeader()}\n`;
  for await (const line of lines)
    yield format === "csv" ? `${reportCsvLine(line)}\n` : `${JSON.stringify(line)}\n`;
}

import type { ReportLine } from "../results/results-store.js";

const COLUMNS = [
  "row",
  "reference",
  "idempotency_key",
  "result",
  "upstream_id",
  "upstream_status",
  "error",
] as const;

/** RFC 4180: a cell with a comma, quote or line break is quoted, quotes doubled. */
function cell(value: string | number | undefined): string {
  const text = value === undefined ? "" : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
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

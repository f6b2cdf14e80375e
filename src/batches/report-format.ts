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

export function reportCsvHeader(): string {
  return COLUMNS.join(",");
}

export function reportCsvLine(line: ReportLine): string {
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

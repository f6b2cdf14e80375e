import { reportCell } from "../batches/report-format.js";
import type { DriftItem } from "../processors/sweep-state.js";

const COLUMNS = [
  "id",
  "kind",
  "account",
  "currency",
  "amount",
  "job_id",
  "moneyq_result",
  "moneyq_upstream_id",
  "provider_id",
  "provider_status",
  "provider_amount",
  "provider_currency",
  "provider_created_at",
  "found_at",
] as const;

const field = (side: Readonly<Record<string, unknown>> | undefined, name: string) => {
  const value = side?.[name];
  return typeof value === "string" || typeof value === "number" ? value : undefined;
};

/** A sweep's drift items as CSV, safe to open in a spreadsheet (formula cells quoted as text). */
export function driftCsv(items: readonly DriftItem[]): string {
  const lines = [COLUMNS.join(",")];
  for (const item of items) {
    const { moneyq, provider } = item;
    lines.push(
      [
        item.id,
        item.kind,
        item.account,
        item.currency,
        item.amount,
        field(moneyq, "jobId"),
        field(moneyq, "result"),
        field(moneyq, "upstreamId"),
        field(provider, "id"),
        field(provider, "status"),
        field(provider, "amount"),
        field(provider, "currency"),
        field(provider, "createdAt"),
        item.foundAt,
      ]
        .map(reportCell)
        .join(","),
    );
  }
  return `${lines.join("\n")}\n`;
}

import {
  decimalFromUnits,
  decimalsOf,
  maxDecimalsOf,
  type RowMoney,
  unitsOf,
} from "../queues/job-money.js";

/**
 * A batch's per-currency totals. Each accepted row with a currency and an amount counts in its
 * currency; they are kept in the batch's meta as integer units (amount × 10^scale, the scale
 * being the most decimal places of the currency's rows), so that Redis adds them exactly:
 * `requested` and `pending` written at submission, a row moved from `pending` (or its earlier
 * result, when replayed) to its result's bucket by the results script (BATCH_TOTALS).
 */

export const TOTAL_BUCKETS = [
  "requested",
  "pending",
  "succeeded",
  "failed",
  "cancelled",
  "needs_reconciliation",
  "reversed",
] as const;
export type TotalBucket = (typeof TOTAL_BUCKETS)[number];

/** Rows and their summed amount (a decimal text, exact). */
export interface TotalEntry {
  readonly rows: number;
  readonly amount: string;
}

/**
 * Per currency: requested (every accepted row), pending (no result yet), and each result's
 * (`failed` counts `failed` and `rejected`); `reversed`, the rows that succeeded and that the
 * provider later reversed or returned (moved there from `succeeded`).
 */
export type BatchTotals = Readonly<Record<string, Readonly<Record<TotalBucket, TotalEntry>>>>;

/**
 * The meta fields of the requested totals of `rows` (every accepted row's money): per
 * currency its scale, and `requested` and `pending` rows and units, every other bucket 0.
 */
export function requestedTotalFields(rows: Iterable<RowMoney>): Record<string, string> {
  const byCurrency = new Map<string, RowMoney[]>();
  for (const row of rows) {
    const list = byCurrency.get(row.currency);
    if (list === undefined) byCurrency.set(row.currency, [row]);
    else list.push(row);
  }
  const fields: Record<string, string> = {};
  for (const [currency, list] of byCurrency) {
    const scale = maxDecimalsOf(list.map((r) => r.amount));
    const units = list.reduce((sum, r) => sum + unitsOf(r.amount, scale), 0n);
    const t = `t:${currency}:`;
    fields[`${t}scale`] = String(scale);
    for (const bucket of TOTAL_BUCKETS) {
      const counted = bucket === "requested" || bucket === "pending";
      fields[`${t}${bucket}:rows`] = counted ? String(list.length) : "0";
      fields[`${t}${bucket}:units`] = counted ? units.toString() : "0";
    }
  }
  return fields;
}

/** The totals a batch's meta holds (empty when no row had a currency). */
export function totalsOf(meta: Readonly<Record<string, string>>): BatchTotals {
  const totals: Record<string, Record<TotalBucket, TotalEntry>> = {};
  for (const [field, value] of Object.entries(meta)) {
    const currency = /^t:([A-Z]+):scale$/.exec(field)?.[1];
    if (currency === undefined) continue;
    const scale = Number(value);
    const entry = (bucket: TotalBucket): TotalEntry => ({
      rows: Number(meta[`t:${currency}:${bucket}:rows`] ?? 0),
      amount: decimalFromUnits(BigInt(meta[`t:${currency}:${bucket}:units`] ?? "0"), scale),
    });
    totals[currency] = Object.fromEntries(TOTAL_BUCKETS.map((b) => [b, entry(b)])) as Record<
      TotalBucket,
      TotalEntry
    >;
  }
  return totals;
}

/** Subtracts `rows` (refused after the requested totals were written) from them. */
export function refusedTotalIncrements(
  meta: Readonly<Record<string, string>>,
  rows: Iterable<RowMoney>,
): [field: string, by: string][] {
  const out: [string, string][] = [];
  for (const row of rows) {
    const scale = Number(meta[`t:${row.currency}:scale`] ?? decimalsOf(row.amount));
    const units = unitsOf(row.amount, scale).toString();
    for (const bucket of ["requested", "pending"]) {
      out.push(
        [`t:${row.currency}:${bucket}:rows`, "-1"],
        [`t:${row.currency}:${bucket}:units`, `-${units}`],
      );
    }
  }
  return out;
}

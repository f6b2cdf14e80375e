import { compareDecimal, decimalText } from "../queues/job-money.js";
import type { ResolvedAs } from "../results/resolutions.js";

/**
 * Where moneyq's books and the provider's differ (docs/reconciliation.md, "The sweep"):
 * - `provider_succeeded`: moneyq recorded failed, rejected, cancelled or needs_reconciliation;
 *   the provider says it succeeded;
 * - `provider_failed`: moneyq recorded succeeded; the provider says it failed, or reversed it;
 * - `unknown_debit`: a debit at the provider that moneyq never sent;
 * - `amount_differs`: the amount or currency differs;
 * - `missing_at_provider`: a success of moneyq's with no record at the provider in the window.
 */
export const DRIFT_KINDS = [
  "provider_succeeded",
  "provider_failed",
  "unknown_debit",
  "amount_differs",
  "missing_at_provider",
] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

/** A provider's record of a list, as the profile reads it. */
export interface ProviderRecord {
  readonly id: string;
  readonly status: string | undefined;
  /** What its status means through the profile; `reversed` also when it names a reversal. */
  readonly meaning: "succeeded" | "pending" | "failed" | "reversed" | "unknown";
  /** CREDIT, DEBIT, WITHDRAWAL... as the provider says it; undefined when the list says none. */
  readonly type?: string | undefined;
  readonly amount?: string | undefined;
  readonly currency?: string | undefined;
  readonly reference?: string | undefined;
  /** Set on a transaction that reverses another: it is money back, not a debit. */
  readonly reversalOf?: string | undefined;
  readonly reversedBy?: string | undefined;
  readonly createdAt?: string | undefined;
}

/** moneyq's side of a record: the job it belongs to, as recorded. */
export interface BookedJob {
  readonly jobId: string;
  /** The result as recorded (a later resolution does not change it). */
  readonly result: "succeeded" | "failed" | "rejected" | "needs_reconciliation" | "cancelled";
  /** The money its request asked for, where moneyq knows it. */
  readonly money?: { readonly currency: string; readonly amount: string } | undefined;
  /** Whether a resolution was recorded already. */
  readonly resolved: boolean;
  /** Whether its reversal was recorded already. */
  readonly reversed: boolean;
}

/** What a record, set against moneyq's books, calls for. */
export interface Verdict {
  readonly drift?: DriftKind;
  /** A job left to reconciliation whose outcome the record proves. */
  readonly resolveTo?: ResolvedAs;
  /** A success the provider reversed, to record as `job.reversed`. */
  readonly reverse?: true;
}

const DEBIT_TYPES = new Set(["debit", "withdrawal"]);

/** A record that took money out: a debit or withdrawal (a list without types: every record). */
function isDebit(record: ProviderRecord): boolean {
  if (record.reversalOf !== undefined) return false;
  return record.type === undefined || DEBIT_TYPES.has(record.type.trim().toLowerCase());
}

function moneyDiffers(record: ProviderRecord, job: BookedJob): boolean {
  const booked = job.money;
  if (booked === undefined || record.amount === undefined || record.currency === undefined)
    return false;
  if (record.currency.trim().toUpperCase() !== booked.currency) return true;
  const amount = decimalText(record.amount);
  return amount === undefined || compareDecimal(amount, booked.amount) !== 0;
}

/**
 * One provider record against moneyq's books, the one pure decision of the sweep: its drift,
 * if any; a resolution it proves; a reversal it shows. A record still pending, or whose status
 * means nothing to the profile, proves nothing.
 */
export function judge(record: ProviderRecord, job: BookedJob | undefined): Verdict {
  if (job === undefined) {
    const made = record.meaning === "succeeded" || record.meaning === "reversed";
    return made && isDebit(record) ? { drift: "unknown_debit" } : {};
  }
  const { meaning } = record;
  if (meaning === "succeeded") {
    if (job.result === "succeeded")
      return moneyDiffers(record, job) ? { drift: "amount_differs" } : {};
    const resolve = job.result === "needs_reconciliation" && !job.resolved;
    return { drift: "provider_succeeded", ...(resolve && { resolveTo: "succeeded" as const }) };
  }
  if (meaning === "failed") {
    if (job.result === "succeeded") return { drift: "provider_failed" };
    return job.result === "needs_reconciliation" && !job.resolved ? { resolveTo: "failed" } : {};
  }
  if (meaning === "reversed") {
    if (job.result === "succeeded")
      return { drift: "provider_failed", ...(!job.reversed && { reverse: true as const }) };
    // Paid, then reversed: the job's payment happened.
    const resolve = job.result === "needs_reconciliation" && !job.resolved;
    return { drift: "provider_succeeded", ...(resolve && { resolveTo: "succeeded" as const }) };
  }
  return {};
}

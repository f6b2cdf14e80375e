import type { JobKind } from "../queues/job-kinds.js";

/** How a cell's text becomes the request's value. */
export type CellType = "string" | "number" | "json";

/** One column of a batch file: where its value goes in the operation's request. */
export interface BatchColumn {
  readonly name: string;
  /** `reference` goes to the job itself; every other column to `request.<part>.<name>`. */
  readonly part: "job" | "body" | "params" | "query";
  readonly type: CellType;
  readonly required: boolean;
}

export interface BatchKindSpec {
  readonly jobKind: JobKind;
  readonly columns: readonly BatchColumn[];
}

const col = (
  name: string,
  part: BatchColumn["part"],
  type: CellType = "string",
  required = true,
): BatchColumn => ({ name, part, type, required });
const optional = (name: string, part: BatchColumn["part"], type: CellType = "string") =>
  col(name, part, type, false);

/** The caller's unique reference of the row: it derives the row's idempotency key. */
const reference = col("reference", "job");

/**
 * The kinds of rows a batch may hold, and their columns (docs/batches.md). Column names
 * are the contract's field names, so a row reads like the request it becomes.
 */
export const BATCH_KINDS = {
  "payout.bank": {
    jobKind: "payout.bank",
    columns: [
      reference,
      col("amount", "body", "number"),
      col("currency", "body"),
      col("bankCode", "body"),
      col("accountNumber", "body"),
      col("accountName", "body"),
      col("bankName", "body"),
      optional("iso2", "body"),
      optional("narration", "body"),
    ],
  },
  "payout.momo": {
    jobKind: "payout.momo",
    columns: [
      reference,
      col("amount", "body", "number"),
      col("currency", "body"),
      col("phoneNumber", "body"),
      // The spec requires none of these; the provider profile's required fields decide, per row.
      optional("network", "body"),
      optional("iso2", "body"),
      optional("narration", "body"),
    ],
  },
  "payout.stable": {
    jobKind: "payout.stable",
    columns: [
      reference,
      col("subAccountId", "params"),
      col("amount", "body"),
      col("toAddress", "body"),
      optional("currency", "body"),
      optional("network", "body"),
    ],
  },
  "funding.wallet": {
    jobKind: "funding.wallet",
    columns: [
      reference,
      col("amount", "body", "number"),
      col("currency", "body"),
      col("paymentMethod", "body"),
      optional("iso2", "body"),
      optional("phoneNumber", "body"),
      optional("network", "body"),
    ],
  },
  "exchange.order": {
    jobKind: "exchange.order",
    columns: [
      reference,
      col("offerId", "params"),
      col("amount", "body", "number"),
      col("buyerDebitPaymentMethod", "body"),
      col("buyerCreditPaymentMethod", "body"),
      optional("buyerCreditPaymentDetails", "body", "json"),
      optional("buyerDebitPaymentDetails", "body", "json"),
    ],
  },
} as const satisfies Record<string, BatchKindSpec>;

export type BatchKind = keyof typeof BATCH_KINDS;
export const BATCH_KIND_NAMES = Object.keys(BATCH_KINDS) as BatchKind[];

export function isBatchKind(value: unknown): value is BatchKind {
  return typeof value === "string" && Object.hasOwn(BATCH_KINDS, value);
}

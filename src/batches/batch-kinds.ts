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
  /**
   * A cell the contract and the default provider profile accept: the example row of
   * `moneyq batch template`, kept here so that it cannot miss a column.
   */
  readonly example: string;
}

export interface BatchKindSpec {
  readonly jobKind: JobKind;
  readonly columns: readonly BatchColumn[];
}

const col = (
  name: string,
  part: BatchColumn["part"],
  example: string,
  type: CellType = "string",
  required = true,
): BatchColumn => ({ name, part, type, required, example });
const optional = (
  name: string,
  part: BatchColumn["part"],
  example: string,
  type: CellType = "string",
) => col(name, part, example, type, false);

/** The caller's unique reference of the row: it derives the row's idempotency key. */
const reference = col("reference", "job", "ref-0001");
/** A TRON address of spec 4.4's pattern. */
const TO_ADDRESS = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8";

/**
 * The kinds of rows a batch may hold, and their columns (docs/batches.md). Column names
 * are the contract's field names, so a row reads like the request it becomes.
 */
export const BATCH_KINDS = {
  "payout.bank": {
    jobKind: "payout.bank",
    columns: [
      reference,
      col("amount", "body", "1500.00", "number"),
      col("currency", "body", "NGN"),
      col("bankCode", "body", "044"),
      col("accountNumber", "body", "0123456789"),
      col("accountName", "body", "Ada Obi"),
      col("bankName", "body", "Access Bank"),
      optional("iso2", "body", "NG"),
      optional("narration", "body", "November payroll"),
    ],
  },
  "payout.momo": {
    jobKind: "payout.momo",
    columns: [
      reference,
      col("amount", "body", "200.00", "number"),
      col("currency", "body", "KES"),
      col("phoneNumber", "body", "254712345678"),
      // The spec requires none of these; the provider profile's required fields decide, per row.
      optional("network", "body", "MPESA"),
      optional("iso2", "body", "KE"),
      optional("narration", "body", "Marketplace payout"),
    ],
  },
  "payout.stable": {
    jobKind: "payout.stable",
    columns: [
      reference,
      col("subAccountId", "params", "sub_0001"),
      col("amount", "body", "25.5"),
      col("toAddress", "body", TO_ADDRESS),
      optional("currency", "body", "USDT"),
      optional("network", "body", "polygon"),
    ],
  },
  "funding.wallet": {
    jobKind: "funding.wallet",
    columns: [
      reference,
      col("amount", "body", "5000.00", "number"),
      col("currency", "body", "GHS"),
      col("paymentMethod", "body", "MOBILE_MONEY"),
      optional("iso2", "body", "GH"),
      optional("phoneNumber", "body", "233245998920"),
      optional("network", "body", "MTN"),
    ],
  },
  "exchange.order": {
    jobKind: "exchange.order",
    columns: [
      reference,
      col("offerId", "params", "offer_usd_ngn"),
      col("amount", "body", "100", "number"),
      col("buyerDebitPaymentMethod", "body", "WALLET"),
      col("buyerCreditPaymentMethod", "body", "BANK_TRANSFER"),
      optional(
        "buyerCreditPaymentDetails",
        "body",
        '{"accountNumber":"0123456789","bankCode":"044"}',
        "json",
      ),
      optional("buyerDebitPaymentDetails", "body", '{"currency":"USD"}', "json"),
    ],
  },
} as const satisfies Record<string, BatchKindSpec>;

export type BatchKind = keyof typeof BATCH_KINDS;
export const BATCH_KIND_NAMES = Object.keys(BATCH_KINDS) as BatchKind[];

export function isBatchKind(value: unknown): value is BatchKind {
  return typeof value === "string" && Object.hasOwn(BATCH_KINDS, value);
}

import { z } from "zod";
import {
  Currency,
  PaymentMethod,
  SortDirection,
  SortField,
  TransactionStatus,
  TransactionType,
} from "./enums.js";
import { LIMITS } from "./limits.js";
import {
  createdWindow,
  iso2,
  limitedAmount,
  narration,
  nonEmpty,
  pathId,
  timestamps,
  WINDOW_ORDER,
} from "./primitives.js";

/** 4.1 */
export const WithdrawToBankBody = z.strictObject({
  amount: limitedAmount,
  currency: Currency,
  bankCode: nonEmpty,
  accountNumber: z.string().min(1).max(LIMITS.accountNumberMax),
  accountName: z.string().min(1).max(LIMITS.accountNameMax),
  bankName: z.string().min(1).max(LIMITS.bankNameMax),
  iso2: iso2.optional(),
  narration: narration.optional(),
});

/** 4.2; required fields are a decision (contract-decisions.md). */
export const WithdrawToMobileMoneyBody = z.strictObject({
  amount: limitedAmount,
  currency: Currency,
  phoneNumber: z.string().min(LIMITS.momoPhoneMin).max(LIMITS.momoPhoneMax),
  network: nonEmpty,
  iso2: iso2,
  narration: narration.optional(),
});

/** 4.3 */
export const FundWalletBody = z.strictObject({
  amount: limitedAmount,
  currency: Currency,
  paymentMethod: PaymentMethod,
  iso2: iso2.optional(),
  phoneNumber: z.string().min(LIMITS.fundWalletPhoneMin).max(LIMITS.fundWalletPhoneMax).optional(),
  network: nonEmpty.optional(),
});

/** 4.11; parameter names, and the `since`/`until` window, are decisions. */
export const ListTransactionsQuery = z
  .strictObject({
    sortDirection: SortDirection.optional(),
    sortBy: SortField.optional(),
    currency: Currency.optional(),
    type: TransactionType.optional(),
    status: TransactionStatus.optional(),
    ...createdWindow,
  })
  .refine(...WINDOW_ORDER);

/** 4.12 */
export const TransactionParams = z.strictObject({ transactionId: pathId });

export const TransactionChannel = z.enum([
  "bank",
  "mobile_money",
  "fund_wallet",
  "virtual_account",
]);

export const Transaction = z.looseObject({
  transactionId: z.string(),
  type: TransactionType,
  /**
   * One of the spec's four, or the word of a return shown as a status change (the sandbox's
   * `REVERSED` by default): a provider may have words of its own (decision).
   */
  status: z.union([TransactionStatus, z.string()]),
  channel: TransactionChannel,
  amount: z.number(),
  fee: z.number(),
  currency: Currency,
  narration: z.string().optional(),
  failureReason: z.string().optional(),
  /** On a reversal: the transaction it reverses. On a reversed one: its reversal. */
  reversalOf: z.string().optional(),
  reversedBy: z.string().optional(),
  /** The idempotency key it was made under, echoed as a merchant reference (sandbox decision). */
  reference: z.string().optional(),
  ...timestamps,
});
export type Transaction = z.infer<typeof Transaction>;

export const TransactionList = z.looseObject({ transactions: z.array(Transaction) });

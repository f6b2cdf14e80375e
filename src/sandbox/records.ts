import type { z } from "zod";
import type {
  BuyerPaymentMethod,
  Currency,
  OrderStatus,
  StableCurrency,
  StableNetwork,
  StableTransactionType,
  TransactionStatus,
  TransactionType,
} from "../contract/enums.js";
import type { TransactionChannel } from "../contract/transactions.js";

export interface AccountRecord {
  readonly accountId: string;
  readonly name: string;
  readonly apiKey: string;
  readonly createdAt: string;
}

export interface WalletRecord {
  readonly walletId: string;
  readonly accountId: string;
  readonly currency: Currency;
  readonly createdAt: string;
}

export interface TransactionRecord {
  readonly transactionId: string;
  readonly accountId: string;
  /** The wallet of `currency`; wallet, amount and currency change only by a hand edit. */
  walletId: string;
  readonly type: TransactionType;
  status: TransactionStatus;
  readonly channel: z.infer<typeof TransactionChannel>;
  amountMinor: number;
  readonly feeMinor: number;
  currency: Currency;
  readonly narration: string | undefined;
  readonly idempotencyKey: string | null;
  failureReason: string | undefined;
  readonly reversalOf: string | undefined;
  reversedBy: string | undefined;
  /**
   * A return shown as a status change: the word the status shows instead of `status` (which
   * stays SUCCESSFUL underneath); the money is back.
   */
  returnedAs: string | undefined;
  /** When (sandbox clock, ms) a scheduled reversal comes due, while one is scheduled. */
  reversalDueAt: number | undefined;
  /** Hidden by the control API: absent from lists and lookups, its money back. */
  hidden: boolean;
  /** Changed only by a hand edit. */
  createdAt: string;
  updatedAt: string;
}

export interface SubAccountRecord {
  readonly subAccountId: string;
  readonly accountId: string;
}

export interface StableTransactionRecord {
  readonly transactionId: string;
  readonly subAccountId: string;
  readonly accountId: string;
  readonly type: StableTransactionType;
  status: TransactionStatus;
  readonly currency: StableCurrency;
  readonly network: StableNetwork;
  readonly amountMicro: number;
  readonly toAddress: string | undefined;
  readonly relatedTransactionId: string | undefined;
  failureReason: string | undefined;
  readonly createdAt: string;
  updatedAt: string;
}

export interface OfferRecord {
  readonly offerId: string;
  readonly fromCurrency: Currency;
  readonly toCurrency: Currency;
  readonly rate: number;
  readonly minAmount: number;
  readonly maxAmount: number;
}

export interface OrderRecord {
  readonly orderId: string;
  readonly accountId: string;
  readonly offerId: string;
  status: OrderStatus;
  readonly amountMinor: number;
  readonly fromCurrency: Currency;
  readonly toCurrency: Currency;
  readonly rate: number;
  readonly convertedMinor: number;
  readonly buyerDebitPaymentMethod: BuyerPaymentMethod;
  readonly buyerCreditPaymentMethod: BuyerPaymentMethod;
  readonly paymentLinkToken: string | undefined;
  failureReason: string | undefined;
  readonly createdAt: string;
  updatedAt: string;
}

export interface PaymentLinkRecord {
  readonly token: string;
  readonly accountId: string;
  readonly offerId: string;
  status: "ACTIVE" | "USED" | "DECLINED";
  reason: string | undefined;
  readonly createdAt: string;
}

export interface VirtualAccountRecord {
  readonly virtualAccountId: string;
  readonly accountId: string;
  readonly accountNumber: string;
  readonly amountMinor: number;
  used: boolean;
  readonly expiresAtMs: number;
  readonly createdAt: string;
}

import { z } from "zod";

/** Currency set of spec 2.2, used wherever a currency is an enum. */
export const CURRENCIES = [
  "NGN",
  "USD",
  "EUR",
  "GBP",
  "CAD",
  "CNY",
  "INR",
  "GHS",
  "XOF",
  "USDT",
  "BUSD",
  "USDC",
  "CNGN",
  "XAF",
  "CDF",
  "KES",
  "MWK",
  "RWF",
  "TZS",
  "UGX",
  "ZMW",
  "SLE",
  "ETB",
  "MAD",
  "ZAR",
] as const;
export const Currency = z.enum(CURRENCIES);
export type Currency = z.infer<typeof Currency>;

/** Spec 2.2: the exchange-rate lookup (4.10) accepts the same set without SLE. */
export const EXCHANGE_RATE_CURRENCIES = CURRENCIES.filter(
  (c): c is Exclude<Currency, "SLE"> => c !== "SLE",
);
export const ExchangeRateCurrency = z.enum(EXCHANGE_RATE_CURRENCIES);
export type ExchangeRateCurrency = z.infer<typeof ExchangeRateCurrency>;

export const PaymentMethod = z.enum([
  "CARD",
  "WALLET",
  "BANK_TRANSFER",
  "MOBILE_MONEY",
  "BANK_ACCOUNT",
]);
export type PaymentMethod = z.infer<typeof PaymentMethod>;

export const BuyerPaymentMethod = z.enum([
  "CARD",
  "WALLET",
  "BANK_TRANSFER",
  "MOBILE_MONEY",
  "INTERAC",
  "ZELLE",
  "STABLE_CURRENCY",
  "ALIPAY",
  "WECHAT_PAY",
]);
export type BuyerPaymentMethod = z.infer<typeof BuyerPaymentMethod>;

export const StableCurrency = z.enum(["USDT", "USDC"]);
export type StableCurrency = z.infer<typeof StableCurrency>;

export const StableNetwork = z.enum(["polygon", "arbitrum", "base", "solana"]);
export type StableNetwork = z.infer<typeof StableNetwork>;

export const StableTransactionType = z.enum(["DEPOSIT", "WITHDRAWAL", "CHARGES", "REVERSAL"]);
export type StableTransactionType = z.infer<typeof StableTransactionType>;

export const TransactionType = z.enum(["CREDIT", "DEBIT"]);
export type TransactionType = z.infer<typeof TransactionType>;

export const TransactionStatus = z.enum(["SUCCESSFUL", "PENDING", "FAILED", "CANCELLED"]);
export type TransactionStatus = z.infer<typeof TransactionStatus>;

export const SortDirection = z.enum(["asc", "desc"]);
export type SortDirection = z.infer<typeof SortDirection>;

export const SortField = z.enum(["date", "amount", "type", "status"]);
export type SortField = z.infer<typeof SortField>;

/** Exchange order states: the spec names none; see docs/contract-decisions.md. */
export const OrderStatus = z.enum(["PENDING", "COMPLETED", "FAILED", "DECLINED", "CANCELLED"]);
export type OrderStatus = z.infer<typeof OrderStatus>;

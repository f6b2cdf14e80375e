import type { z } from "zod";
import {
  CreateOrderBody,
  DeclinePaymentLinkBody,
  ListOrdersQuery,
  OfferParams,
  Order,
  OrderList,
  OrderParams,
  PaymentLinkDecline,
  PaymentLinkTokenQuery,
} from "./exchange.js";
import {
  ListStableTransactionsQuery,
  StableBalance,
  StableTransaction,
  StableTransactionPage,
  StableTransactionParams,
  SubAccountParams,
  WithdrawStableBody,
} from "./stable.js";
import {
  FundWalletBody,
  ListTransactionsQuery,
  Transaction,
  TransactionList,
  TransactionParams,
  WithdrawToBankBody,
  WithdrawToMobileMoneyBody,
} from "./transactions.js";
import {
  ExchangeRate,
  ExchangeRateQuery,
  IdentityVerification,
  IdentityVerificationBody,
  PaymentLinkRate,
  PaymentLinkRateQuery,
} from "./utility.js";
import { CreateVirtualAccountBody, CreateWalletBody, VirtualAccount, Wallet } from "./wallets.js";

export type HttpMethod = "GET" | "POST";

/** The schemas of a request's path parameters, query and body, for the parts it has. */
export interface RequestSchemas {
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
}

/** One operation of the spec: the one shape that client, sandbox and docs read. */
export interface OperationSpec extends RequestSchemas {
  /** Spec section, "4.1" to "4.19". */
  readonly section: string;
  readonly method: HttpMethod;
  /** Relative to the base URL (which ends in /v1); `{name}` marks a path parameter. */
  readonly path: string;
  /** IDEM in the spec: the request must carry an `idempotencykey` header. */
  readonly idempotent: boolean;
  readonly summary: string;
  readonly data: z.ZodType;
}

/** Spec section 4, in order. Keys are the client's method names. */
export const operations = {
  withdrawToBank: {
    section: "4.1",
    method: "POST",
    path: "/transaction/transfer/bank",
    idempotent: true,
    summary: "Withdraw from a wallet to a bank account",
    body: WithdrawToBankBody,
    data: Transaction,
  },
  withdrawToMobileMoney: {
    section: "4.2",
    method: "POST",
    path: "/transaction/transfer/momo",
    idempotent: true,
    summary: "Withdraw from a wallet to a mobile money account",
    body: WithdrawToMobileMoneyBody,
    data: Transaction,
  },
  fundWallet: {
    section: "4.3",
    method: "POST",
    path: "/transaction/fund-wallet",
    idempotent: true,
    summary: "Fund a wallet",
    body: FundWalletBody,
    data: Transaction,
  },
  withdrawStable: {
    section: "4.4",
    method: "POST",
    path: "/stable-currency/sub-accounts/{subAccountId}/withdraw",
    idempotent: true,
    summary: "Withdraw USDT or USDC from a sub-account to an external address",
    params: SubAccountParams,
    body: WithdrawStableBody,
    data: StableTransaction,
  },
  createWallet: {
    section: "4.5",
    method: "POST",
    path: "/wallet",
    idempotent: false,
    summary: "Create a fiat wallet for a user",
    body: CreateWalletBody,
    data: Wallet,
  },
  createVirtualAccount: {
    section: "4.6",
    method: "POST",
    path: "/transaction/collection/virtual-account",
    idempotent: false,
    summary: "Create a one-time virtual bank account for collection",
    body: CreateVirtualAccountBody,
    data: VirtualAccount,
  },
  initiateIdentityVerification: {
    section: "4.7",
    method: "GET",
    path: "/utility/provider/identity-verification/initiate",
    idempotent: false,
    summary: "Initiate identity verification through a provider (GET with a JSON body)",
    body: IdentityVerificationBody,
    data: IdentityVerification,
  },
  declinePaymentLink: {
    section: "4.8",
    method: "POST",
    path: "/payment-link/decline",
    idempotent: false,
    summary: "Decline a payment link (done by the payer)",
    query: PaymentLinkTokenQuery,
    body: DeclinePaymentLinkBody,
    data: PaymentLinkDecline,
  },
  getPaymentLinkRate: {
    section: "4.9",
    method: "GET",
    path: "/utility/payment-link-rate",
    idempotent: false,
    summary: "Rate used to create an exchange from a payment link",
    query: PaymentLinkRateQuery,
    data: PaymentLinkRate,
  },
  getExchangeRate: {
    section: "4.10",
    method: "GET",
    path: "/utility/exchange-rate",
    idempotent: false,
    summary: "Exchange rate lookup",
    query: ExchangeRateQuery,
    data: ExchangeRate,
  },
  listTransactions: {
    section: "4.11",
    method: "GET",
    path: "/transactions",
    idempotent: false,
    summary: "List the caller's transactions",
    query: ListTransactionsQuery,
    data: TransactionList,
  },
  getTransaction: {
    section: "4.12",
    method: "GET",
    path: "/transactions/{transactionId}",
    idempotent: false,
    summary: "Look up a transaction",
    params: TransactionParams,
    data: Transaction,
  },
  listStableTransactions: {
    section: "4.13",
    method: "GET",
    path: "/stable-currency/transactions",
    idempotent: false,
    summary: "Stable-currency transaction history",
    query: ListStableTransactionsQuery,
    data: StableTransactionPage,
  },
  getStableTransaction: {
    section: "4.14",
    method: "GET",
    path: "/stable-currency/sub-accounts/{subAccountId}/transaction/{transactionId}",
    idempotent: false,
    summary: "Look up one transaction of a sub-account",
    params: StableTransactionParams,
    data: StableTransaction,
  },
  getStableBalance: {
    section: "4.15",
    method: "GET",
    path: "/stable-currency/sub-accounts/{subAccountId}/balance",
    idempotent: false,
    summary: "USDT and USDC balances of a sub-account across networks",
    params: SubAccountParams,
    data: StableBalance,
  },
  listOrders: {
    section: "4.16",
    method: "GET",
    path: "/order/my-orders",
    idempotent: false,
    summary: "List the caller's exchanges",
    query: ListOrdersQuery,
    data: OrderList,
  },
  getOrder: {
    section: "4.17",
    method: "GET",
    path: "/order/{orderId}",
    idempotent: false,
    summary: "Look up an exchange",
    params: OrderParams,
    data: Order,
  },
  createOrder: {
    section: "4.18",
    method: "POST",
    path: "/offer/{offerId}/order",
    idempotent: true,
    summary: "Create an exchange from an offer",
    params: OfferParams,
    body: CreateOrderBody,
    data: Order,
  },
  createPaymentLinkOrder: {
    section: "4.19",
    method: "POST",
    path: "/offer/{offerId}/payment-request/order",
    idempotent: true,
    summary: "Create an exchange from a payment link",
    params: OfferParams,
    query: PaymentLinkTokenQuery,
    body: CreateOrderBody,
    data: Order,
  },
} as const satisfies Record<string, OperationSpec>;

export type Operations = typeof operations;
export type OperationId = keyof Operations;

export const OPERATION_IDS = Object.keys(operations) as OperationId[];

/** Names of the `{param}` segments of a path, in order. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
}

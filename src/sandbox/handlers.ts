import type { z } from "zod";
import type { OperationId, Operations } from "../contract/operations.js";
import { createOrder, declinePaymentLink, getOrder, listOrders } from "./exchange-operations.js";
import {
  createVirtualAccount,
  createWallet,
  fundWallet,
  getTransaction,
  listTransactions,
  withdraw,
} from "./fiat-operations.js";
import { rateOf } from "./rates.js";
import type { RequestContext } from "./request-context.js";
import type { SandboxState } from "./sandbox-state.js";
import {
  getStableBalance,
  getStableTransaction,
  listStableTransactions,
  withdrawStable,
} from "./stable-operations.js";

type Part<O, K extends string> = O extends { [P in K]: infer S extends z.ZodType }
  ? z.output<S>
  : undefined;

/** An operation's validated input, as the sandbox receives it. */
export interface HandlerInput<O> {
  readonly params: Part<O, "params">;
  readonly query: Part<O, "query">;
  readonly body: Part<O, "body">;
}

type Handler<K extends OperationId> = (
  state: SandboxState,
  ctx: RequestContext,
  input: HandlerInput<Operations[K]>,
) => z.input<Operations[K]["data"]>;

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Every operation's behaviour; a missing one is a type error. */
export const handlers: { readonly [K in OperationId]: Handler<K> } = {
  withdrawToBank: (s, ctx, { body }) => withdraw(s, ctx, "bank", body),
  withdrawToMobileMoney: (s, ctx, { body }) => withdraw(s, ctx, "mobile_money", body),
  fundWallet: (s, ctx, { body }) => fundWallet(s, ctx, body),
  withdrawStable: (s, ctx, { params, body }) => withdrawStable(s, ctx, params.subAccountId, body),
  createWallet: (s, ctx, { body }) => createWallet(s, ctx, body),
  createVirtualAccount: (s, ctx, { body }) => createVirtualAccount(s, ctx, body),
  initiateIdentityVerification: (s) => ({
    verificationReference: s.nextId("idv"),
    status: "INITIATED",
  }),
  declinePaymentLink: (s, ctx, { query, body }) => declinePaymentLink(s, ctx, query.token, body),
  getPaymentLinkRate: (_s, _ctx, { query }) => ({
    fromCurrency: query.fromCurrency,
    toCurrency: query.toCurrency,
    rate: rateOf(query.fromCurrency, query.toCurrency),
  }),
  getExchangeRate: (_s, _ctx, { query }) => {
    const rate = rateOf(query.fromCurrency, query.toCurrency);
    return {
      fromCurrency: query.fromCurrency,
      toCurrency: query.toCurrency,
      rate,
      amount: query.amount,
      convertedAmount: round2(query.amount * rate),
    };
  },
  listTransactions: (s, ctx, { query }) => listTransactions(s, ctx, query),
  getTransaction: (s, ctx, { params }) => getTransaction(s, ctx, params.transactionId),
  listStableTransactions: (s, ctx, { query }) => listStableTransactions(s, ctx, query),
  getStableTransaction: (s, ctx, { params }) =>
    getStableTransaction(s, ctx, params.subAccountId, params.transactionId),
  getStableBalance: (s, ctx, { params }) => getStableBalance(s, ctx, params.subAccountId),
  listOrders: (s, ctx, { query }) => listOrders(s, ctx, query),
  getOrder: (s, ctx, { params }) => getOrder(s, ctx, params.orderId),
  createOrder: (s, ctx, { params, body }) => createOrder(s, ctx, params.offerId, body),
  createPaymentLinkOrder: (s, ctx, { params, query, body }) =>
    createOrder(s, ctx, params.offerId, body, query.token),
};

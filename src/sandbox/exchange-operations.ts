import type { z } from "zod";
import type { CreateOrderBody, DeclinePaymentLinkBody, Order } from "../contract/index.js";
import { inWindow, type ListWindow } from "./list-window.js";
import { forcedOutcome } from "./magic-values.js";
import { fiatToMinor } from "./money.js";
import { presentOrder } from "./present.js";
import type { OrderRecord } from "./records.js";
import type { RequestContext } from "./request-context.js";
import { fieldError, SandboxError } from "./sandbox-error.js";
import { type SandboxState, walletBalance } from "./sandbox-state.js";

/**
 * 4.18 and 4.19: the amount (in the offer's source currency) is held in the source wallet;
 * PENDING resolves to COMPLETED (converted amount credited to the target wallet) or FAILED.
 */
export function createOrder(
  state: SandboxState,
  ctx: RequestContext,
  offerId: string,
  body: z.output<typeof CreateOrderBody>,
  paymentLinkToken?: string,
): Order {
  const accountId = ctx.account.accountId;
  const offer = state.offers.get(offerId);
  if (!offer) throw new SandboxError(404, "not_found", `offer ${offerId} not found`);
  const link =
    paymentLinkToken === undefined
      ? undefined
      : state.owned(state.paymentLinks, paymentLinkToken, "payment link", accountId);
  if (link && link.status !== "ACTIVE") throw fieldError("token", `payment link is ${link.status}`);
  if (link && link.offerId !== offerId)
    throw fieldError("token", `payment link belongs to offer ${link.offerId}`);
  if (body.amount < offer.minAmount)
    throw fieldError(
      "amount",
      `at least ${offer.minAmount} ${offer.fromCurrency} for offer ${offerId}`,
    );
  if (body.amount > offer.maxAmount)
    throw fieldError(
      "amount",
      `at most ${offer.maxAmount} ${offer.fromCurrency} for offer ${offerId}`,
    );
  const from = state.walletOf(accountId, offer.fromCurrency);
  if (!from)
    throw fieldError("offerId", `this account has no ${offer.fromCurrency} wallet to pay from`);
  const to =
    state.walletOf(accountId, offer.toCurrency) ?? state.createWallet(accountId, offer.toCurrency);
  const outcome = forcedOutcome(undefined, body.amount);
  const insufficient = new SandboxError(
    400,
    "insufficient_funds",
    `insufficient ${offer.fromCurrency} balance for this amount`,
  );
  if (outcome === "insufficient_funds") throw insufficient;

  const amountMinor = fiatToMinor(body.amount);
  const at = state.clock.iso();
  const order: OrderRecord = {
    orderId: state.nextId("ord"),
    accountId,
    offerId,
    status: "PENDING",
    amountMinor,
    fromCurrency: offer.fromCurrency,
    toCurrency: offer.toCurrency,
    rate: offer.rate,
    convertedMinor: Math.round(amountMinor * offer.rate),
    buyerDebitPaymentMethod: body.buyerDebitPaymentMethod,
    buyerCreditPaymentMethod: body.buyerCreditPaymentMethod,
    paymentLinkToken,
    failureReason: undefined,
    createdAt: at,
    updatedAt: at,
  };
  const ref = (memo: string) => ({
    accountId,
    transactionId: order.orderId,
    effectId: order.orderId,
    idempotencyKey: ctx.idempotencyKey,
    memo,
    at: state.clock.iso(),
  });
  try {
    state.ledger.post(
      [
        { balance: walletBalance(from.walletId, "available"), delta: -amountMinor },
        { balance: walletBalance(from.walletId, "held"), delta: amountMinor },
      ],
      ref("hold for exchange"),
    );
  } catch (error) {
    if (error instanceof SandboxError && error.code === "insufficient_funds") throw insufficient;
    throw error;
  }
  state.orders.set(order.orderId, order);
  if (link) link.status = "USED";
  if (outcome === "stay_pending") return presentOrder(order);

  state.schedule(state.settleDelayMs, () => {
    order.updatedAt = state.clock.iso();
    if (outcome === "fail") {
      state.ledger.post(
        [
          { balance: walletBalance(from.walletId, "held"), delta: -amountMinor },
          { balance: walletBalance(from.walletId, "available"), delta: amountMinor },
        ],
        ref("exchange failed: hold released"),
      );
      order.status = "FAILED";
      order.failureReason = "the counterparty did not deliver";
      return;
    }
    state.ledger.post(
      [
        { balance: walletBalance(from.walletId, "held"), delta: -amountMinor },
        { balance: walletBalance(to.walletId, "available"), delta: order.convertedMinor },
      ],
      ref("exchange completed"),
    );
    order.status = "COMPLETED";
  });
  return presentOrder(order);
}

/** 4.8: the payer declines; the link can no longer be used. */
export function declinePaymentLink(
  state: SandboxState,
  ctx: RequestContext,
  token: string,
  body: z.output<typeof DeclinePaymentLinkBody>,
) {
  const link = state.owned(state.paymentLinks, token, "payment link", ctx.account.accountId);
  if (link.status !== "ACTIVE") throw fieldError("token", `payment link is ${link.status}`);
  link.status = "DECLINED";
  link.reason = body.reason;
  return {
    token,
    status: "DECLINED" as const,
    ...(body.reason !== undefined && { reason: body.reason }),
  };
}

/** 4.16: newest first. */
export function listOrders(state: SandboxState, ctx: RequestContext, window: ListWindow) {
  const orders = [...state.orders.values()]
    .filter((o) => o.accountId === ctx.account.accountId && inWindow(o.createdAt, window))
    .reverse();
  return { orders: orders.map(presentOrder) };
}

/** 4.17 */
export function getOrder(state: SandboxState, ctx: RequestContext, orderId: string): Order {
  return presentOrder(state.owned(state.orders, orderId, "order", ctx.account.accountId));
}

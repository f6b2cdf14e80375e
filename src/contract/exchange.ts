import { z } from "zod";
import { BuyerPaymentMethod, Currency, OrderStatus } from "./enums.js";
import {
  createdWindow,
  jsonObject,
  nonEmpty,
  pathId,
  positiveAmount,
  timestamps,
  WINDOW_ORDER,
} from "./primitives.js";

/** 4.18, 4.19 path */
export const OfferParams = z.strictObject({ offerId: pathId });

/** 4.18, 4.19 body */
export const CreateOrderBody = z.strictObject({
  amount: positiveAmount,
  buyerDebitPaymentMethod: BuyerPaymentMethod,
  buyerCreditPaymentMethod: BuyerPaymentMethod,
  buyerCreditPaymentDetails: jsonObject.optional(),
  buyerDebitPaymentDetails: jsonObject.optional(),
});

/** 4.19 query; 4.8 identifies the payment link the same way (decision). */
export const PaymentLinkTokenQuery = z.strictObject({ token: nonEmpty });

/** 4.16: the spec lists no parameters; the `since`/`until` window is a decision. */
export const ListOrdersQuery = z.strictObject({ ...createdWindow }).refine(...WINDOW_ORDER);

/** 4.17 */
export const OrderParams = z.strictObject({ orderId: pathId });

export const Order = z.looseObject({
  orderId: z.string(),
  offerId: z.string(),
  status: OrderStatus,
  amount: z.number(),
  fromCurrency: Currency,
  toCurrency: Currency,
  rate: z.number(),
  convertedAmount: z.number(),
  buyerDebitPaymentMethod: BuyerPaymentMethod,
  buyerCreditPaymentMethod: BuyerPaymentMethod,
  paymentLinkToken: z.string().optional(),
  failureReason: z.string().optional(),
  ...timestamps,
});
export type Order = z.infer<typeof Order>;

export const OrderList = z.looseObject({ orders: z.array(Order) });

/** 4.8 body; reason is optional (decision). */
export const PAYMENT_LINK_DECLINE_REASON_MAX = 500;
export const DeclinePaymentLinkBody = z.strictObject({
  reason: z.string().max(PAYMENT_LINK_DECLINE_REASON_MAX).optional(),
});

export const PaymentLinkDecline = z.looseObject({
  token: z.string(),
  status: z.literal("DECLINED"),
  reason: z.string().optional(),
});

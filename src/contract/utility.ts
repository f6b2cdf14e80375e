import { z } from "zod";
import { Currency, ExchangeRateCurrency } from "./enums.js";
import { nonEmpty, queryPositiveNumber, rateIso2 } from "./primitives.js";

/** 4.9; parameter names mirror 4.10 (decision). */
export const PaymentLinkRateQuery = z.strictObject({
  fromCurrency: Currency,
  toCurrency: Currency,
  fromCurrencyIso2: rateIso2,
  toCurrencyIso2: rateIso2,
});

export const PaymentLinkRate = z.looseObject({
  fromCurrency: Currency,
  toCurrency: Currency,
  rate: z.number(),
});

/** 4.10 */
export const ExchangeRateQuery = z.strictObject({
  fromCurrency: ExchangeRateCurrency,
  toCurrency: ExchangeRateCurrency,
  fromCurrencyIso2: rateIso2,
  toCurrencyIso2: rateIso2,
  amount: queryPositiveNumber,
});

export const ExchangeRate = z.looseObject({
  fromCurrency: ExchangeRateCurrency,
  toCurrency: ExchangeRateCurrency,
  rate: z.number(),
  amount: z.number(),
  convertedAmount: z.number(),
});

/** 4.7: `value` is the identity number to verify (decision). */
export const IdentityVerificationBody = z.strictObject({ value: nonEmpty });

export const IdentityVerification = z.looseObject({
  verificationReference: z.string(),
  status: z.literal("INITIATED"),
});

import { z } from "zod";
import { LIMITS, STABLE_AMOUNT_PATTERN, TO_ADDRESS_PATTERN } from "./limits.js";

function hasAtMostDecimals(value: number, decimals: number): boolean {
  const scaled = value * 10 ** decimals;
  return Math.abs(scaled - Math.round(scaled)) < 1e-6;
}

/** A positive fiat amount with at most two decimals (decision: docs/contract-decisions.md). */
export const positiveAmount = z
  .number()
  .gt(0)
  .refine((v) => hasAtMostDecimals(v, LIMITS.fiatDecimals), {
    message: `at most ${LIMITS.fiatDecimals} decimal places`,
  });

/** Spec 8: the amount maximum of withdrawals and fund wallet. */
export const limitedAmount = z
  .number()
  .gt(0)
  .max(LIMITS.amountMax)
  .refine((v) => hasAtMostDecimals(v, LIMITS.fiatDecimals), {
    message: `at most ${LIMITS.fiatDecimals} decimal places`,
  });

/** Spec 4.4: a decimal string; at most 6 decimals, the tokens' precision (decision). */
export const stableAmount = z
  .string()
  .regex(STABLE_AMOUNT_PATTERN)
  .refine((v) => (v.split(".")[1]?.length ?? 0) <= LIMITS.stableDecimals, {
    message: `at most ${LIMITS.stableDecimals} decimal places`,
  })
  .refine((v) => Number(v) > 0, { message: "greater than 0" });

export const toAddress = z.string().regex(TO_ADDRESS_PATTERN);
export const iso2 = z.string().length(LIMITS.iso2Length);
export const rateIso2 = z.string().length(LIMITS.rateIso2Length);
export const narration = z.string().max(LIMITS.narrationMax);
export const nonEmpty = z.string().min(1);
/** An identifier in a path segment. */
export const pathId = z.string().min(1).max(128);

/** Query values arrive as strings; callers of the client pass numbers. */
export const queryPositiveNumber = z.coerce.number<number>().gt(0);
export const queryPage = z.coerce.number<number>().int().min(LIMITS.pageMin);
export const queryPageSize = z.coerce
  .number<number>()
  .int()
  .min(LIMITS.pageSizeMin)
  .max(LIMITS.pageSizeMax);

export const isoDateTime = z.string();
/** A free-form JSON object (spec 2.4: buyer payment details are "JSON objects"). */
export const jsonObject = z.record(z.string(), z.unknown());

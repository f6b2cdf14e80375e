import { z } from "zod";
import { fiatAmountRule } from "./exact-money.js";
import { freeFormObject } from "./free-form.js";
import { LIMITS, STABLE_AMOUNT_PATTERN, TO_ADDRESS_PATTERN } from "./limits.js";

/** Exact money rules on positive amounts (a non-positive one already broke "greater than 0"). */
const exactMoney = (value: number, ctx: z.core.$RefinementCtx<number>) => {
  const rule = value > 0 ? fiatAmountRule(value) : undefined;
  if (rule) ctx.addIssue({ code: "custom", message: rule });
};

/**
 * A positive fiat amount: at least 0.01, at most two decimal places and 15 significant
 * digits, checked on its decimal form (decision: docs/contract-decisions.md).
 */
export const positiveAmount = z.number().gt(0).superRefine(exactMoney);

/** Spec 8: the amount maximum of withdrawals and fund wallet. */
export const limitedAmount = z.number().gt(0).max(LIMITS.amountMax).superRefine(exactMoney);

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
/**
 * An identifier in a path segment: visible ASCII without "/", and never "." or ".." (which
 * would name another path once normalised).
 */
export const pathId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x2e\x30-\x7e]+$/, {
    message: "must be visible ASCII characters without '/'",
  })
  .refine((v) => v !== "." && v !== "..", { message: "must not be '.' or '..'" });

/** Query values arrive as strings; callers of the client pass numbers. */
export const queryPositiveNumber = z.coerce.number<number>().gt(0);
export const queryPage = z.coerce.number<number>().int().min(LIMITS.pageMin);
export const queryPageSize = z.coerce
  .number<number>()
  .int()
  .min(LIMITS.pageSizeMin)
  .max(LIMITS.pageSizeMax);

export const isoDateTime = z.string();

export const DATE_TIME_RULE =
  "must be an ISO 8601 date and time with an offset, such as 2025-01-31T00:00:00Z or 2025-01-31T01:00:00+01:00";
/** A point in time a caller gives: ISO 8601 with seconds and an offset (`Z` or `+01:00`). */
export const dateTimeWithOffset = z.iso.datetime({ offset: true, message: DATE_TIME_RULE });

/**
 * The optional `since` (inclusive) and `until` (exclusive) of a list, on `createdAt`
 * (decision: docs/contract-decisions.md); spread into a list's query, then `.refine(...WINDOW_ORDER)`.
 */
export const createdWindow = {
  since: dateTimeWithOffset.optional(),
  until: dateTimeWithOffset.optional(),
};

type Window = { readonly since?: string | undefined; readonly until?: string | undefined };

/** An empty or inverted window is a caller's mistake, never a question worth sending. */
export const WINDOW_ORDER: [(q: Window) => boolean, { message: string; path: PropertyKey[] }] = [
  (q) =>
    q.since === undefined || q.until === undefined || Date.parse(q.until) > Date.parse(q.since),
  { message: "must be later than since", path: ["until"] },
];

/** When a record that changes state (a transaction, an order) was created and last updated. */
export const timestamps = { createdAt: isoDateTime, updatedAt: isoDateTime };
/**
 * A free-form JSON object (spec 2.4: buyer payment details are "JSON objects"), bounded in
 * nesting and size, without prototype keys (decision).
 */
export const jsonObject = freeFormObject();

// Repeated payments: each account's policy on a payment that repeats one paid or queued.
import { z } from "zod";
import type { EnvReader } from "./env-reader.js";
import { readAccountPolicies } from "./json-lists.js";

/** What happens to a payment that repeats one paid or queued in the window (docs/safety.md). */
export const REPEAT_POLICIES = ["warn", "hold", "refuse"] as const;

export type RepeatPolicy = (typeof REPEAT_POLICIES)[number];

/** An account's policy on repeated payments: what a repeat does, and how far back one is looked for. */
export interface PaymentRepeatsPolicy {
  readonly policy: RepeatPolicy;
  /** How long a payment is remembered after it was enqueued (ms). */
  readonly windowMs: number;
}

const DAY_MS = 24 * 3_600_000;

/** An account not listed in MONEYQ_PAYMENT_REPEATS: repeats are reported, over 7 days. */
export const DEFAULT_PAYMENT_REPEATS: PaymentRepeatsPolicy = Object.freeze({
  policy: "warn",
  windowMs: 7 * DAY_MS,
});

/** The policy on repeated payments of `account`: its own, or the default. */
export function paymentRepeatsOf(
  policies: ReadonlyMap<string, PaymentRepeatsPolicy> | undefined,
  account: string,
): PaymentRepeatsPolicy {
  return policies?.get(account) ?? DEFAULT_PAYMENT_REPEATS;
}

const PaymentRepeatsEntry = z.strictObject({
  account: z.string(),
  policy: z.enum(REPEAT_POLICIES),
  windowDays: z
    .number()
    .refine((days) => days > 0 && days <= 90, {
      message: "must be more than 0 and at most 90 days",
    })
    .optional(),
});

/**
 * MONEYQ_PAYMENT_REPEATS: a JSON array, an entry per account whose policy on repeated payments
 * is not the default (warn, 7 days).
 */
export function readPaymentRepeats(
  read: EnvReader,
  aliases: readonly string[],
): ReadonlyMap<string, PaymentRepeatsPolicy> {
  const list = {
    variable: "MONEYQ_PAYMENT_REPEATS",
    schema: PaymentRepeatsEntry,
    what: "policies",
  };
  return readAccountPolicies(read, aliases, list, (entry) =>
    Object.freeze({
      policy: entry.policy,
      windowMs:
        entry.windowDays === undefined
          ? DEFAULT_PAYMENT_REPEATS.windowMs
          : Math.round(entry.windowDays * DAY_MS),
    }),
  );
}

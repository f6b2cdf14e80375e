/**
 * Velocity limits (docs/safety.md; configured as config/outflow.ts's VelocityLimits): how much, and how
 * many payouts, an account may send per currency in a rolling hour and day, and to one
 * beneficiary in a rolling day. Amounts are compared as whole units of a ten-thousandth, never
 * as floating point.
 */

import { unitsOf } from "../queues/job-money.js";

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Decimal places amounts are counted to; a payout's finer digits round it up, never down. */
export const AMOUNT_DIGITS = 4;

/** Units a payout counts at most: whole numbers in Redis and Lua stay exact below it. */
const MAX_UNITS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Whole units of a non-negative decimal amount ("100.5" is 1005000): digits past
 * AMOUNT_DIGITS round it up, so a limit is never passed by rounding; an amount past 900
 * billion counts as that (it passes no amount limit anyone sets).
 */
export function amountUnits(decimal: string): number {
  const [whole = "0", fraction = ""] = decimal.split(".");
  const roundsUp = /[1-9]/.test(fraction.slice(AMOUNT_DIGITS)) ? 1n : 0n;
  const units = unitsOf(`${whole}.${fraction.slice(0, AMOUNT_DIGITS)}`, AMOUNT_DIGITS) + roundsUp;
  return Number(units < MAX_UNITS ? units : MAX_UNITS);
}

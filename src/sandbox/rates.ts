import type { Currency } from "../contract/enums.js";

/**
 * Units of each currency per US dollar: a fixed table, so rates are deterministic.
 * Documented in docs/sandbox.md.
 */
export const UNITS_PER_USD: Readonly<Record<Currency, number>> = Object.freeze({
  NGN: 1500,
  USD: 1,
  EUR: 0.92,
  GBP: 0.79,
  CAD: 1.36,
  CNY: 7.2,
  INR: 83,
  GHS: 15,
  XOF: 605,
  USDT: 1,
  BUSD: 1,
  USDC: 1,
  CNGN: 1500,
  XAF: 605,
  CDF: 2800,
  KES: 129,
  MWK: 1730,
  RWF: 1300,
  TZS: 2600,
  UGX: 3700,
  ZMW: 26,
  SLE: 22.5,
  ETB: 120,
  MAD: 10,
  ZAR: 18,
});

/** How many `to` one `from` buys, to 6 significant decimals. */
export function rateOf(from: Currency, to: Currency): number {
  return Number((UNITS_PER_USD[to] / UNITS_PER_USD[from]).toFixed(6));
}

import { LIMITS } from "./limits.js";

/**
 * The significant digits of a decimal text ("-0.0150", "1.5e3", "120"): its digits without
 * sign, exponent, leading and trailing zeros; at least 1. The one count behind every
 * digits rule, for numbers (by the text JavaScript writes for them) and for text as sent.
 */
export function significantDigits(text: string): number {
  const digits = text
    .replace(/^[-+]/, "")
    .replace(/[eE].*$/, "")
    .replace(".", "")
    .replace(/^0+/, "")
    .replace(/0+$/, "");
  return Math.max(digits.length, 1);
}

/**
 * The decimal form of a number as JavaScript writes it (the shortest text that reads back to
 * the same double): its significant digits and its decimal places. 1e-9 has 1 significant
 * digit and 9 decimal places; 0.30000000000000004 has 17 digits and 17 places.
 */
export function decimalForm(value: number): { digits: number; decimals: number } {
  const text = Math.abs(value).toString().toLowerCase();
  const [mantissa = "", exponentText] = text.split("e");
  const fraction = mantissa.split(".")[1] ?? "";
  const decimals = Math.max(0, fraction.length - Number(exponentText ?? 0));
  return { digits: significantDigits(text), decimals };
}

/**
 * The first money rule a fiat amount breaks, or undefined. Checked on the decimal form, not
 * with a float tolerance: 0.30000000000000004 is not 0.3, and a number with more than 15
 * significant digits is one a double may already have rounded.
 */
export function fiatAmountRule(value: number): string | undefined {
  if (!Number.isFinite(value)) return "must be a finite number";
  if (value < LIMITS.fiatMin) return `at least ${LIMITS.fiatMin} (the smallest fiat amount)`;
  const { digits, decimals } = decimalForm(value);
  if (digits > LIMITS.significantDigitsMax)
    return `at most ${LIMITS.significantDigitsMax} significant digits (a double cannot hold more exactly)`;
  if (decimals > LIMITS.fiatDecimals) return `at most ${LIMITS.fiatDecimals} decimal places`;
  return undefined;
}

/**
 * The rule a decimal text breaks when read as a number, or undefined: more than 15
 * significant digits do not survive the conversion to a double ("0.300000000000000004"
 * would silently become 0.3).
 */
export function decimalTextRule(text: string): string | undefined {
  if (significantDigits(text) > LIMITS.significantDigitsMax)
    return `at most ${LIMITS.significantDigitsMax} significant digits (a double cannot hold more exactly)`;
  return undefined;
}

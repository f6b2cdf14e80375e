/**
 * A job's money: the currency and amount of its request, as exact decimal text, for batch
 * totals and approval thresholds. Amounts are compared and added as integers at a common
 * scale, never as floating point.
 */

/** A row's money: its currency and amount as exact decimal text. */
export interface RowMoney {
  readonly currency: string;
  readonly amount: string;
}

const CURRENCY = /^[A-Z]{3,10}$/;

/**
 * The currency and amount of a row's request (its body's `currency` and `amount`); undefined
 * when it has no currency (an exchange order's comes from its offer) or no usable amount.
 */
export function rowMoney(request: unknown): RowMoney | undefined {
  const body = (request as { body?: Record<string, unknown> } | undefined)?.body;
  const currency = body?.currency;
  const amount = body?.amount;
  if (typeof currency !== "string" || !CURRENCY.test(currency)) return undefined;
  if (typeof amount !== "number" && typeof amount !== "string") return undefined;
  const text = decimalText(amount);
  return text === undefined ? undefined : { currency, amount: text };
}

/**
 * The plain decimal text of a non-negative amount, without exponent: 1e-7 is "0.0000001",
 * 1500 is "1500". Undefined for anything else (negative, not finite, not a decimal).
 */
export function decimalText(value: number | string): string | undefined {
  const text = typeof value === "number" ? value.toString().toLowerCase() : value.trim();
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(text);
  if (!match) return undefined;
  const digits = `${match[1]}${match[2] ?? ""}`;
  const point = (match[1] as string).length + Number(match[3] ?? 0);
  const padded = point <= 0 ? `${"0".repeat(1 - point)}${digits}` : digits.padEnd(point, "0");
  const at = Math.max(point, 1);
  const whole = padded.slice(0, at).replace(/^0+(?=\d)/, "");
  const fraction = padded.slice(at).replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

export function decimalsOf(amount: string): number {
  return amount.split(".")[1]?.length ?? 0;
}

/** The most decimal places among `amounts` (a loop: a batch's rows are too many to spread). */
export function maxDecimalsOf(amounts: Iterable<string>): number {
  let most = 0;
  for (const amount of amounts) most = Math.max(most, decimalsOf(amount));
  return most;
}

export function unitsOf(amount: string, scale: number): bigint {
  const [whole = "0", fraction = ""] = amount.split(".");
  return BigInt(`${whole}${fraction.padEnd(scale, "0")}`);
}

/** The decimal text of `units` at `scale`: 150n at scale 2 is "1.50". */
export function decimalFromUnits(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** Compares two non-negative decimal texts exactly: negative, 0 or positive as a < = > b. */
export function compareDecimal(a: string, b: string): number {
  const scale = Math.max(decimalsOf(a), decimalsOf(b));
  const d = unitsOf(a, scale) - unitsOf(b, scale);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

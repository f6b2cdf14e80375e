/** Fiat amounts are kept in minor units (cents); stable amounts in micro-units (6 decimals). */
export const FIAT_SCALE = 100;
export const STABLE_SCALE = 1_000_000;

export function fiatToMinor(amount: number): number {
  return Math.round(amount * FIAT_SCALE);
}

export function minorToFiat(minor: number): number {
  return minor / FIAT_SCALE;
}

/** Exact: "25.5" -> 25_500_000, with no floating-point step. */
export function stableToMicro(amount: string): number {
  const [whole = "0", fraction = ""] = amount.split(".");
  return Number(whole) * STABLE_SCALE + Number(fraction.padEnd(6, "0").slice(0, 6));
}

export function microToStable(micro: number): string {
  const sign = micro < 0 ? "-" : "";
  const abs = Math.abs(micro);
  const fraction = String(abs % STABLE_SCALE).padStart(6, "0");
  return `${sign}${Math.floor(abs / STABLE_SCALE)}.${fraction}`;
}

/** What a magic value forces, in the way Stripe's test numbers do. Listed in docs/sandbox.md. */
export type ForcedOutcome =
  | "fail"
  | "stay_pending"
  | "reverse"
  | "reverse_as_status"
  | "insufficient_funds";

/** Bank account numbers (4.1) and phone numbers (4.2, 4.3) that force an outcome. */
export const MAGIC_DESTINATIONS: Readonly<Record<string, ForcedOutcome>> = Object.freeze({
  "0000000001": "fail",
  "0000000002": "stay_pending",
  "0000000003": "reverse",
  "0000000004": "insufficient_funds",
  "0000000005": "reverse_as_status",
});

/** Amounts (in any operation that moves money) that force an outcome. */
export const MAGIC_AMOUNTS: Readonly<Record<string, ForcedOutcome>> = Object.freeze({
  "666.66": "fail",
  "777.77": "stay_pending",
  "888.88": "reverse",
  "999.99": "insufficient_funds",
  "555.55": "reverse_as_status",
});

/** The outcome forced by a destination or an amount (written with two decimals), if any. */
export function forcedOutcome(
  destination: string | undefined,
  amount: number,
): ForcedOutcome | undefined {
  if (destination !== undefined) {
    const byDestination = MAGIC_DESTINATIONS[destination];
    if (byDestination) return byDestination;
  }
  return MAGIC_AMOUNTS[amount.toFixed(2)];
}

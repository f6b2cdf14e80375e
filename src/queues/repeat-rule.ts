import type { PaymentMatch } from "./payment-repeats.js";

/**
 * The sentence that names a repeated payment's first match and the policy that met it, as a
 * row issue's or a field issue's rule says it: "repeats a payment paid 2026-11-26 in batch b_1
 * row 4 (payment repeats: refuse, window 7 days)".
 */
export function repeatRule(
  matches: readonly PaymentMatch[],
  policy: string,
  window: string,
): string {
  const first = matches[0];
  const more = matches.length > 1 ? ` and ${matches.length - 1} more` : "";
  return `repeats a payment ${first ? matchText(first) : ""}${more} (payment repeats: ${policy}, window ${window})`;
}

/** One match as a sentence says it. */
export function matchText(match: PaymentMatch): string {
  if (match.state === "in_file") return `of row ${match.row} of this file`;
  const state = match.state === "unconfirmed" ? "unconfirmed (it may have been paid)" : match.state;
  const day = match.at?.slice(0, 10) ?? "";
  const where =
    match.batchId === undefined
      ? `by job ${match.jobId}`
      : `in batch ${match.batchId} row ${match.row}`;
  return `${state} ${day} ${where}`;
}

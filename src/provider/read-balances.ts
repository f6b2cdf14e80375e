import { cutText } from "./bounds.js";
import { valueAt } from "./paths.js";
import type { ProviderProfile } from "./profile.js";

/** One line of a sub-account's balance answer, as the provider wrote it. */
export interface BalanceLine {
  /** Upper-cased, as moneyq writes currencies. */
  readonly currency: string;
  /** Lower-cased, as moneyq writes networks. */
  readonly network: string;
  /** The available amount as it came: a decimal text or a number, checked by its reader. */
  readonly amount: string | number;
}

/** What a balance read found: the lines it could read, or why there were none. */
export type BalanceReading =
  | { readonly read: true; readonly lines: readonly BalanceLine[] }
  | { readonly read: false; readonly why: string };

/** The balances of one of an account's sub-accounts (4.15), as a dry run asks for them. */
export type BalanceSource = (account: string, subAccountId: string) => Promise<BalanceReading>;

/** A balance answer with more lines than this is not read: 4.15 has a few currencies and networks. */
const MAX_LINES = 1_000;
const MAX_WORD_CHARS = 32;
const MAX_AMOUNT_CHARS = 64;

const word = (value: unknown): string | undefined =>
  typeof value === "string" &&
  value.trim().length > 0 &&
  value.length <= MAX_WORD_CHARS &&
  !/\p{Cc}/u.test(value)
    ? value.trim()
    : undefined;

/**
 * The lines of a balance answer's `data`, read through the profile's `balances` paths. A line
 * whose currency, network or amount cannot be read is left out: what it holds is unknown, and a
 * currency without a line is "not verified" to its reader, never zero.
 */
export function readBalances(profile: ProviderProfile, data: unknown): BalanceReading {
  const shape = profile.balances;
  const items = valueAt(data, shape.items);
  if (!Array.isArray(items))
    return { read: false, why: `its answer has no list at ${cutText(shape.items)}` };
  if (items.length > MAX_LINES)
    return { read: false, why: `its answer lists ${items.length} balances, over ${MAX_LINES}` };
  const lines: BalanceLine[] = [];
  for (const item of items) {
    const currency = word(valueAt(item, shape.currency));
    const network = word(valueAt(item, shape.network));
    const amount = valueAt(item, shape.amount);
    const readable =
      (typeof amount === "string" && amount.length <= MAX_AMOUNT_CHARS) ||
      (typeof amount === "number" && Number.isFinite(amount));
    if (currency === undefined || network === undefined || !readable) continue;
    lines.push({ currency: currency.toUpperCase(), network: network.toLowerCase(), amount });
  }
  return { read: true, lines };
}

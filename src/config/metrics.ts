// The metrics server of a worker-only process, and which accounts have series of their own.
import type { EnvReader } from "./env-reader.js";

export interface MetricsConfig {
  /** Where a worker-only process serves /metrics (API processes serve it on the API). */
  readonly host: string;
  readonly port: number;
  /** How long a scrape's Redis readings (queue depth, backlog) are reused. */
  readonly cacheMs: number;
  /**
   * The accounts with series of their own (MONEYQ_METRICS_ACCOUNTS); the rest are counted
   * under `account="_other"` (metrics/metric-accounts.ts).
   */
  readonly accounts: "all" | readonly string[];
}

/**
 * With MONEYQ_METRICS_ACCOUNTS unset, every account has series of its own up to this many
 * accounts (about 80 series each); past it, none has, so /metrics stays small.
 */
export const METRICS_ACCOUNTS_UNSET_UP_TO = 50;

/** MONEYQ_METRICS_ACCOUNTS: `all`, or aliases separated by commas, each configured. */
export function readMetricsAccounts(
  read: EnvReader,
  aliases: readonly string[],
): "all" | readonly string[] {
  const variable = "MONEYQ_METRICS_ACCOUNTS";
  const listed = read.text(variable)?.trim();
  if (listed === undefined) return aliases.length <= METRICS_ACCOUNTS_UNSET_UP_TO ? "all" : [];
  if (listed === "all") return "all";
  const named = listed.split(",").map((a) => a.trim());
  const known = new Set(aliases);
  for (const a of named) {
    if (!known.has(a))
      read.issues.push({
        variable,
        rule: `${JSON.stringify(a.slice(0, 40))} is not a configured account: give "all" or configured aliases separated by commas`,
      });
  }
  return Object.freeze([...new Set(named)]);
}

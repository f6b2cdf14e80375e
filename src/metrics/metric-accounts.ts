/**
 * The account label's value for every other account: it cannot be an alias (an alias starts
 * with a letter), so it never mixes with one account's series.
 */
export const OTHER_ACCOUNTS = "_other";

/**
 * Unnamed accounts that get series of their own in a scrape-time gauge because they need
 * attention (paused, behind, with a reconciliation backlog): the most urgent this many.
 */
export const ATTENTION_ACCOUNTS = 20;

/**
 * Which accounts have series of their own (config.metrics.accounts): every account's series
 * costs about 80 lines of /metrics, so past a few dozen accounts only the named ones keep
 * theirs and the rest are counted together under `account="_other"`. Counters and histograms
 * keep a stable label for an account (a series that moved between labels would break rates);
 * the gauges read at scrape time also show the unnamed accounts that need attention.
 */
export class MetricAccounts {
  readonly #named: ReadonlySet<string> | "all";
  readonly #configured: readonly string[];

  constructor(configured: readonly string[], named: "all" | readonly string[]) {
    this.#configured = configured;
    this.#named = named === "all" ? "all" : new Set(named);
  }

  /** Every account's series of its own. */
  static all(configured: readonly string[]): MetricAccounts {
    return new MetricAccounts(configured, "all");
  }

  /** Whether `account` has series of its own. */
  isNamed(account: string): boolean {
    return this.#named === "all" || this.#named.has(account);
  }

  /** The value of the account label for `account`'s series. */
  label(account: string): string {
    return this.isNamed(account) ? account : OTHER_ACCOUNTS;
  }

  /** The label values a series may start at zero with: the named accounts, and "_other". */
  labels(): readonly string[] {
    const named = this.#configured.filter((a) => this.isNamed(a));
    return named.length < this.#configured.length ? [...named, OTHER_ACCOUNTS] : named;
  }
}

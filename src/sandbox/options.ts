import type { Currency } from "../contract/enums.js";
import { DEFAULT_PROVIDER_PROFILE, type ProviderProfile } from "../provider/profile.js";
import type { FaultSettingsInput } from "./faults.js";

/**
 * How a reversal shows: a new opposite transaction with `reversalOf` (and `reversedBy` on the
 * original), or the original's status changed to a word of its own (a provider's dialect).
 */
export const REVERSAL_STYLES = ["transaction", "status"] as const;
export type ReversalStyle = (typeof REVERSAL_STYLES)[number];

export interface SandboxAccountSeed {
  /** Default: `acct_<n>`. */
  readonly accountId?: string | undefined;
  readonly name?: string | undefined;
  /** Must start with `sk_sandbox_`. Default: generated. */
  readonly apiKey?: string | undefined;
  /** Opening balances of the account's fiat wallets, in major units. Default: SEED_BALANCES. */
  readonly balances?: Partial<Record<Currency, number>> | undefined;
  /** Opening balance of each stable currency on each network. Default: "100000". */
  readonly stableBalance?: string | undefined;
  /** Faults from the start (docs/sandbox.md); default none. */
  readonly faults?: FaultSettingsInput | undefined;
}

export interface SandboxOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0 (a free port). */
  readonly port?: number;
  /** Accounts at start. Default: the documented demo account. */
  readonly accounts?: readonly SandboxAccountSeed[];
  /** How long PENDING lasts before it resolves. Default 100 ms. */
  readonly settleDelayMs?: number;
  /** How long idempotency keys are kept. Default 24 h. */
  readonly idempotencyTtlMs?: number;
  /** Largest request body. Default 1 MiB. */
  readonly bodyLimitBytes?: number;
  /** Seed of the fault generators. Default 1. */
  readonly seed?: number;
  /** Requests kept in the request log for the control API. Default 200000. */
  readonly requestLogSize?: number;
  /**
   * Answer (and accept requests) in the dialect this provider profile describes, as another
   * provider would (docs/provider-profile.md). Default: the contract's shapes.
   */
  readonly profile?: ProviderProfile;
  /** Answer every operation with only the envelope and an empty `data`, as spec 2.1 allows. */
  readonly specMinimal?: boolean;
  /**
   * Refuse any repeated idempotency key with a 400 instead of replaying the first answer, as a
   * provider may: a resend after a dropped answer is then refused although the first was paid.
   */
  readonly rejectRepeatedKeys?: boolean;
  /**
   * How long after success a magic-value payout (account or phone 0000000003 or 0000000005,
   * amount 888.88 or 555.55) is reversed, on the sandbox's clock. Default: `settleDelayMs`.
   */
  readonly reverseAfterMs?: number;
  /** How the reversals of 0000000003 and 888.88 show. Default "transaction". */
  readonly reversalStyle?: ReversalStyle;
  /** The status word of a return shown as a status change. Default "REVERSED". */
  readonly reversedStatus?: string;
}

export const DEMO_ACCOUNT_ID = "acct_demo";
export const DEMO_API_KEY = "sk_sandbox_moneyq_demo_key_0001";

/** Opening fiat balances of a seeded account, in major units. */
export const SEED_BALANCES: Readonly<Partial<Record<Currency, number>>> = Object.freeze({
  NGN: 500_000_000,
  USD: 1_000_000,
  EUR: 500_000,
  GBP: 500_000,
  KES: 50_000_000,
  GHS: 5_000_000,
});

export const SANDBOX_DEFAULTS = Object.freeze({
  host: "127.0.0.1",
  port: 0,
  settleDelayMs: 100,
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
  bodyLimitBytes: 1024 * 1024,
  seed: 1,
  requestLogSize: 200_000,
  stableBalance: "100000",
  reversalStyle: "transaction" as ReversalStyle,
  reversedStatus: "REVERSED",
  accounts: [{ accountId: DEMO_ACCOUNT_ID, name: "moneyq demo business", apiKey: DEMO_API_KEY }],
});

export const SANDBOX_KEY_PREFIX = "sk_sandbox_";
export const LIVE_KEY_PREFIX = "sk_live_";

export const REVERSED_STATUS_RULE =
  "must be 1 to 64 letters, digits, _ or -, starting with a letter, and not a status word the spec or moneyq's default profile already gives a meaning (SUCCESSFUL, COMPLETED, PENDING, FAILED, CANCELLED, DECLINED)";

/** Whether `word` can be a return's status: a word of its own, outside the known statuses. */
export function isReversedStatusWord(word: string): boolean {
  const { succeeded, pending, failed } = DEFAULT_PROVIDER_PROFILE.statuses;
  const known = [...succeeded, ...pending, ...failed].map((w) => w.toLowerCase());
  return /^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(word) && !known.includes(word.toLowerCase());
}

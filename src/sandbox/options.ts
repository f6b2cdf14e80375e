import type { Currency } from "../contract/enums.js";
import type { ProviderProfile } from "../provider/profile.js";
import type { FaultSettingsInput } from "./faults.js";

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
  accounts: [{ accountId: DEMO_ACCOUNT_ID, name: "moneyq demo business", apiKey: DEMO_API_KEY }],
});

export const SANDBOX_KEY_PREFIX = "sk_sandbox_";
export const LIVE_KEY_PREFIX = "sk_live_";

import { randomBytes } from "node:crypto";
import type { Currency, StableCurrency, StableNetwork } from "../contract/enums.js";
import {
  StableCurrency as StableCurrencyEnum,
  StableNetwork as StableNetworkEnum,
} from "../contract/enums.js";
import { SandboxClock } from "./clock.js";
import { EditLog } from "./edit-log.js";
import { Ledger, type Posting } from "./ledger.js";
import { fiatToMinor, stableToMicro } from "./money.js";
import {
  type ReversalStyle,
  SANDBOX_DEFAULTS,
  SANDBOX_KEY_PREFIX,
  type SandboxAccountSeed,
  SEED_BALANCES,
} from "./options.js";
import { rateOf } from "./rates.js";
import type {
  AccountRecord,
  OfferRecord,
  OrderRecord,
  PaymentLinkRecord,
  StableTransactionRecord,
  SubAccountRecord,
  TransactionRecord,
  VirtualAccountRecord,
  WalletRecord,
} from "./records.js";
import { SandboxError } from "./sandbox-error.js";

export const walletBalance = (walletId: string, part: "available" | "held") =>
  `wallet:${walletId}:${part}`;
export const stableBalance = (
  subAccountId: string,
  currency: StableCurrency,
  network: StableNetwork,
  part: "available" | "held",
) => `stable:${subAccountId}:${currency}:${network}:${part}`;

/** Offers every account can order from; limits are in the offer's source currency. */
const OFFER_PAIRS: readonly [Currency, Currency, number, number][] = [
  ["USD", "NGN", 10, 100_000],
  ["NGN", "USD", 10_000, 150_000_000],
  ["GBP", "NGN", 10, 100_000],
  ["EUR", "NGN", 10, 100_000],
  ["USD", "KES", 10, 100_000],
  ["USD", "GHS", 10, 100_000],
];

/** How the sandbox's own schedule moves money: settlement and magic-value reversals. */
export interface BooksSettings {
  /** How long PENDING lasts before it resolves. */
  readonly settleDelayMs: number;
  /** How long after success a magic-value payout is reversed. */
  readonly reverseAfterMs: number;
  /** How the reversals of 0000000003 and 888.88 show. */
  readonly reversalStyle: ReversalStyle;
  /** The status word of a return shown as a status change. */
  readonly reversedStatus: string;
  /** Control changes to the books kept for GET /__sandbox/edits. */
  readonly editLogSize: number;
}

interface Scheduled {
  readonly dueAt: number;
  /** Told when it was due: what it schedules in turn counts from then, not from when it ran. */
  readonly run: (dueAt: number) => void;
}

/** Everything the sandbox knows. Handlers change it synchronously, so each request is atomic. */
export class SandboxState {
  readonly clock = new SandboxClock();
  readonly ledger = new Ledger();
  readonly settleDelayMs: number;
  readonly reverseAfterMs: number;
  readonly reversalStyle: ReversalStyle;
  readonly reversedStatus: string;
  /** Every change made to the books through the control API. */
  readonly edits: EditLog;
  readonly accounts = new Map<string, AccountRecord>();
  readonly accountsByKey = new Map<string, AccountRecord>();
  readonly wallets = new Map<string, WalletRecord>();
  readonly transactions = new Map<string, TransactionRecord>();
  readonly subAccounts = new Map<string, SubAccountRecord>();
  readonly stableTransactions = new Map<string, StableTransactionRecord>();
  readonly offers = new Map<string, OfferRecord>();
  readonly orders = new Map<string, OrderRecord>();
  readonly paymentLinks = new Map<string, PaymentLinkRecord>();
  readonly virtualAccounts = new Map<string, VirtualAccountRecord>();
  readonly #counters = new Map<string, number>();
  readonly #schedule: Scheduled[] = [];

  constructor(settings: BooksSettings) {
    this.settleDelayMs = settings.settleDelayMs;
    this.reverseAfterMs = settings.reverseAfterMs;
    this.reversalStyle = settings.reversalStyle;
    this.reversedStatus = settings.reversedStatus;
    this.edits = new EditLog(settings.editLogSize);
    for (const [from, to, minAmount, maxAmount] of OFFER_PAIRS) {
      const offerId = `offer_${from.toLowerCase()}_${to.toLowerCase()}`;
      this.offers.set(offerId, {
        offerId,
        fromCurrency: from,
        toCurrency: to,
        rate: rateOf(from, to),
        minAmount,
        maxAmount,
      });
    }
  }

  nextId(prefix: string): string {
    const n = (this.#counters.get(prefix) ?? 0) + 1;
    this.#counters.set(prefix, n);
    return `${prefix}_${String(n).padStart(6, "0")}`;
  }

  /** Creates an account with funded wallets, a stable sub-account and a payment link. */
  addAccount(seed: SandboxAccountSeed): AccountRecord {
    const accountId = seed.accountId ?? this.nextId("acct");
    const apiKey = seed.apiKey ?? `${SANDBOX_KEY_PREFIX}${randomBytes(12).toString("hex")}`;
    if (!apiKey.startsWith(SANDBOX_KEY_PREFIX)) {
      throw new SandboxError(
        400,
        "validation_error",
        `apiKey: must start with ${SANDBOX_KEY_PREFIX}`,
      );
    }
    if (this.accounts.has(accountId)) {
      throw new SandboxError(400, "validation_error", `accountId: ${accountId} already exists`);
    }
    if (this.accountsByKey.has(apiKey)) {
      throw new SandboxError(400, "validation_error", "apiKey: already belongs to another account");
    }
    const at = this.clock.iso();
    const account: AccountRecord = {
      accountId,
      name: seed.name ?? accountId,
      apiKey,
      createdAt: at,
    };
    this.accounts.set(accountId, account);
    this.accountsByKey.set(apiKey, account);
    const opening = {
      accountId,
      transactionId: "opening",
      effectId: null,
      idempotencyKey: null,
      at,
    };

    for (const [currency, amount] of Object.entries(seed.balances ?? SEED_BALANCES)) {
      const wallet = this.createWallet(accountId, currency as Currency);
      this.ledger.post(
        [{ balance: walletBalance(wallet.walletId, "available"), delta: fiatToMinor(amount) }],
        {
          ...opening,
          memo: "opening balance",
        },
      );
    }
    const subAccountId = this.nextId("sub");
    this.subAccounts.set(subAccountId, { subAccountId, accountId });
    const micro = stableToMicro(seed.stableBalance ?? SANDBOX_DEFAULTS.stableBalance);
    const postings: Posting[] = [];
    for (const currency of StableCurrencyEnum.options) {
      for (const network of StableNetworkEnum.options) {
        postings.push({
          balance: stableBalance(subAccountId, currency, network, "available"),
          delta: micro,
        });
      }
    }
    this.ledger.post(postings, { ...opening, memo: "opening balance" });
    this.createPaymentLink(accountId, "offer_usd_ngn");
    return account;
  }

  createWallet(accountId: string, currency: Currency): WalletRecord {
    const wallet: WalletRecord = {
      walletId: this.nextId("wal"),
      accountId,
      currency,
      createdAt: this.clock.iso(),
    };
    this.wallets.set(wallet.walletId, wallet);
    return wallet;
  }

  walletOf(accountId: string, currency: Currency): WalletRecord | undefined {
    for (const w of this.wallets.values())
      if (w.accountId === accountId && w.currency === currency) return w;
    return undefined;
  }

  createPaymentLink(accountId: string, offerId: string): PaymentLinkRecord {
    if (!this.offers.has(offerId))
      throw new SandboxError(404, "not_found", `offer ${offerId} not found`);
    const link: PaymentLinkRecord = {
      token: this.nextId("plink"),
      accountId,
      offerId,
      status: "ACTIVE",
      reason: undefined,
      createdAt: this.clock.iso(),
    };
    this.paymentLinks.set(link.token, link);
    return link;
  }

  /** Runs `run` once the sandbox clock reaches `delayMs` from now. */
  schedule(delayMs: number, run: (dueAt: number) => void): void {
    this.scheduleAt(this.clock.now() + delayMs, run);
  }

  /** Runs `run` once the sandbox clock reaches `dueAt` (ms); at the next settling if past. */
  scheduleAt(dueAt: number, run: (dueAt: number) => void): void {
    let lo = 0;
    let hi = this.#schedule.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#schedule[mid] as Scheduled).dueAt <= dueAt) lo = mid + 1;
      else hi = mid;
    }
    this.#schedule.splice(lo, 0, { dueAt, run });
  }

  /**
   * Resolves everything due. Called before every request, so what a caller observes is the
   * same as if resolution had happened exactly on time.
   */
  settleDue(): number {
    const now = this.clock.now();
    let n = 0;
    while (this.#schedule.length > 0 && (this.#schedule[0] as Scheduled).dueAt <= now) {
      const due = this.#schedule.shift() as Scheduled;
      due.run(due.dueAt);
      n += 1;
    }
    return n;
  }

  /** Looks up a record owned by `accountId`; another account's id is "not found", never "forbidden". */
  owned<T extends { accountId: string }>(
    map: Map<string, T>,
    id: string,
    what: string,
    accountId: string,
  ): T {
    const record = map.get(id);
    if (!record || record.accountId !== accountId)
      throw new SandboxError(404, "not_found", `${what} ${id} not found`);
    return record;
  }
}

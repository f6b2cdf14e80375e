import type { Currency } from "../contract/enums.js";
import {
  type BooksChange,
  type ExternalDebit,
  editTransaction,
  externalDebit,
  type ReverseRequest,
  reverseTransaction,
  type TransactionEdit,
  topUp,
} from "./books-edits.js";
import type { BooksEdit } from "./edit-log.js";
import { AccountFaults, FaultSettings, type FaultSettingsInput } from "./faults.js";
import { receiveInboundTransfer } from "./fiat-operations.js";
import { IdempotencyStore } from "./idempotency-store.js";
import type { LedgerEntry } from "./ledger.js";
import { microToStable, minorToFiat } from "./money.js";
import type { ReversalStyle, SandboxAccountSeed } from "./options.js";
import { presentWallet } from "./present.js";
import { SlidingWindowLimiter } from "./rate-limiter.js";
import { type LoggedRequest, RequestLog } from "./request-log.js";
import { SandboxError } from "./sandbox-error.js";
import { SandboxState } from "./sandbox-state.js";

export interface SandboxRuntimeOptions {
  readonly settleDelayMs: number;
  readonly reverseAfterMs: number;
  readonly reversalStyle: ReversalStyle;
  readonly reversedStatus: string;
  readonly idempotencyTtlMs: number;
  readonly seed: number;
  readonly requestLogSize: number;
}

/** A ledger entry as the control API shows it: amounts in major units. */
export interface LedgerView extends Omit<LedgerEntry, "delta"> {
  readonly amount: string;
}

/**
 * The sandbox's moving parts and the control operations on them. The HTTP control API
 * (/__sandbox) and the in-process handle returned by startSandbox are both this class.
 */
export class SandboxControl {
  readonly state: SandboxState;
  readonly idempotency: IdempotencyStore;
  readonly limiter = new SlidingWindowLimiter();
  readonly log: RequestLog;
  readonly #faults = new Map<string, AccountFaults>();
  readonly #seed: number;
  readonly #idempotencyTtlMs: number;

  constructor(options: SandboxRuntimeOptions) {
    this.state = new SandboxState({
      settleDelayMs: options.settleDelayMs,
      reverseAfterMs: options.reverseAfterMs,
      reversalStyle: options.reversalStyle,
      reversedStatus: options.reversedStatus,
      editLogSize: options.requestLogSize,
    });
    this.idempotency = new IdempotencyStore(options.idempotencyTtlMs, this.state.clock);
    this.log = new RequestLog(options.requestLogSize);
    this.#seed = options.seed;
    this.#idempotencyTtlMs = options.idempotencyTtlMs;
  }

  createAccount(seed: SandboxAccountSeed = {}): { accountId: string; apiKey: string } {
    const account = this.state.addAccount(seed);
    if (seed.faults !== undefined) this.setFaults(account.accountId, seed.faults);
    return { accountId: account.accountId, apiKey: account.apiKey };
  }

  faultsOf(accountId: string): AccountFaults | undefined {
    return this.#faults.get(accountId);
  }

  setFaults(accountId: string, settings: FaultSettingsInput): FaultSettings {
    this.#requireAccount(accountId);
    const parsed = FaultSettings.parse(settings);
    this.#faults.set(accountId, new AccountFaults(parsed, this.#seed));
    return parsed;
  }

  clearFaults(accountId: string): void {
    this.#requireAccount(accountId);
    this.#faults.delete(accountId);
  }

  /** Moves the sandbox clock forward and resolves whatever became due. */
  advanceClock(ms: number): { now: string; settled: number } {
    this.state.clock.advance(ms);
    return { now: this.state.clock.iso(), settled: this.state.settleDue() };
  }

  ledger(accountId?: string): LedgerView[] {
    this.state.settleDue();
    return this.state.ledger.entries(accountId).map(({ delta, ...entry }) => ({
      ...entry,
      amount: entry.balance.startsWith("stable:")
        ? microToStable(delta)
        : minorToFiat(delta).toFixed(2),
    }));
  }

  /** Empty when all hold: no negative balance, balances equal entries, one effect per key. */
  invariantViolations(accountId?: string): string[] {
    this.state.settleDue();
    return this.state.ledger.violations(this.#idempotencyTtlMs, accountId);
  }

  requests(filter: { accountId?: string; afterSeq?: number } = {}): LoggedRequest[] {
    return this.log.list(filter);
  }

  /** Reverses a SUCCESSFUL DEBIT, at once or later, as a transaction or a status change. */
  reverseTransaction(transactionId: string, request: ReverseRequest = {}): BooksChange {
    this.state.settleDue();
    return reverseTransaction(this.state, transactionId, request);
  }

  /** Changes what a fiat transaction says, and its money to match. */
  editTransaction(transactionId: string, edit: TransactionEdit): BooksChange {
    this.state.settleDue();
    return editTransaction(this.state, transactionId, edit);
  }

  /** A DEBIT another system made on the account, never through /v1. */
  /** Money paid into an account's wallet from outside: a successful CREDIT. */
  topUp(accountId: string, credit: { amount: number; currency: Currency }): BooksChange {
    this.state.settleDue();
    return topUp(this.state, accountId, credit);
  }

  externalDebit(accountId: string, debit: ExternalDebit): BooksChange {
    this.state.settleDue();
    return externalDebit(this.state, accountId, debit);
  }

  /** Every control change to the books, in order. */
  edits(filter: { accountId?: string; afterSeq?: number } = {}): BooksEdit[] {
    this.state.settleDue();
    return this.state.edits.list(filter);
  }

  receiveTransfer(accountNumber: string, amount: number) {
    this.state.settleDue();
    return receiveInboundTransfer(this.state, accountNumber, amount);
  }

  createPaymentLink(accountId: string, offerId: string): { token: string; offerId: string } {
    this.#requireAccount(accountId);
    const link = this.state.createPaymentLink(accountId, offerId);
    return { token: link.token, offerId: link.offerId };
  }

  accounts() {
    this.state.settleDue();
    return [...this.state.accounts.values()].map((a) => ({
      accountId: a.accountId,
      name: a.name,
      wallets: [...this.state.wallets.values()]
        .filter((w) => w.accountId === a.accountId)
        .map((w) => presentWallet(this.state, w)),
      subAccountIds: [...this.state.subAccounts.values()]
        .filter((s) => s.accountId === a.accountId)
        .map((s) => s.subAccountId),
      paymentLinks: [...this.state.paymentLinks.values()]
        .filter((l) => l.accountId === a.accountId)
        .map((l) => ({ token: l.token, offerId: l.offerId, status: l.status })),
      faults: this.#faults.get(a.accountId)?.settings ?? null,
    }));
  }

  offers() {
    return [...this.state.offers.values()];
  }

  #requireAccount(accountId: string): void {
    if (!this.state.accounts.has(accountId))
      throw new SandboxError(404, "not_found", `account ${accountId} not found`);
  }
}

import type { Currency, TransactionStatus } from "../contract/enums.js";
import type { Transaction } from "../contract/transactions.js";
import type { BooksEdit, TransactionFacts } from "./edit-log.js";
import type { PostingRef } from "./ledger.js";
import { fiatToMinor, minorToFiat } from "./money.js";
import type { ReversalStyle } from "./options.js";
import { presentTransaction, shownStatus } from "./present.js";
import type { TransactionRecord } from "./records.js";
import {
  type ReversalOutcome,
  reversalRefusal,
  reverseNow,
  scheduleReversal,
} from "./reversals.js";
import { fieldError, SandboxError } from "./sandbox-error.js";
import type { SandboxState } from "./sandbox-state.js";
import { positionOf, postDifference } from "./transaction-position.js";
import { contextOf, newTransaction } from "./transaction-records.js";

/** A reversal asked for through the control API. */
export interface ReverseRequest {
  /** 0 (default): at once. */
  readonly afterMs?: number | undefined;
  readonly as?: ReversalStyle | undefined;
}

/** A hand edit: each field given replaces what the transaction says. */
export interface TransactionEdit {
  readonly status?: TransactionStatus | undefined;
  readonly amount?: number | undefined;
  readonly currency?: Currency | undefined;
  readonly createdAt?: string | undefined;
  readonly hidden?: boolean | undefined;
}

/** A DEBIT made on the account by another system, never through /v1. */
export interface ExternalDebit {
  readonly amount: number;
  readonly currency: Currency;
  readonly status?: TransactionStatus | undefined;
  readonly channel?: "bank" | "mobile_money" | undefined;
  readonly createdAt?: string | undefined;
  readonly narration?: string | undefined;
}

/** What a control change answers: its entry in the edit log and the transactions it touched. */
export interface BooksChange {
  readonly edit: BooksEdit;
  /** The transaction as it now is (shown even when hidden). */
  readonly transaction: Transaction & { readonly hidden: boolean };
  /** The reversing transaction, when one was made at once. */
  readonly reversal?: Transaction;
}

const FAILED_BY_HAND = "failed after the fact (set through the sandbox's control API)";

/**
 * A fiat transaction by id, hidden or not. Stable-currency transactions and orders are not
 * changed by hand: their money is kept in other shapes (fees, conversions).
 */
function controlled(state: SandboxState, transactionId: string): TransactionRecord {
  const t = state.transactions.get(transactionId);
  if (t) return t;
  if (state.stableTransactions.has(transactionId) || state.orders.has(transactionId))
    throw fieldError(
      "transactionId",
      `${transactionId} is a stable-currency transaction or an order; only fiat transactions (spec 4.11) can be changed here`,
    );
  throw new SandboxError(404, "not_found", `transaction ${transactionId} not found`);
}

function factsOf(t: TransactionRecord): TransactionFacts {
  return {
    status: shownStatus(t),
    amount: minorToFiat(t.amountMinor),
    currency: t.currency,
    createdAt: t.createdAt,
    hidden: t.hidden,
  };
}

function changeOf(
  edit: BooksEdit,
  t: TransactionRecord,
  reversal?: TransactionRecord,
): BooksChange {
  return {
    edit,
    transaction: { ...presentTransaction(t), hidden: t.hidden },
    ...(reversal && { reversal: presentTransaction(reversal) }),
  };
}

/** A ledger reference for a control change: no request made it, so it carries no key. */
function controlRef(state: SandboxState, t: TransactionRecord, memo: string): PostingRef {
  return {
    accountId: t.accountId,
    transactionId: t.transactionId,
    effectId: null,
    idempotencyKey: null,
    memo: `control: ${memo}`,
    at: state.clock.iso(),
  };
}

/**
 * Reverses a SUCCESSFUL DEBIT at once or after `afterMs` on the sandbox's clock, as a reversing
 * transaction (default) or as a status change; refused (400, naming why) when it cannot be.
 */
export function reverseTransaction(
  state: SandboxState,
  transactionId: string,
  request: ReverseRequest,
): BooksChange {
  const t = controlled(state, transactionId);
  const as = request.as ?? "transaction";
  const afterMs = request.afterMs ?? 0;
  if (t.type !== "DEBIT")
    throw fieldError("transactionId", `${transactionId} is a CREDIT; only a DEBIT can be reversed`);
  const refusal = reversalRefusal(state, t);
  if (refusal !== undefined) throw fieldError("transactionId", `${transactionId} ${refusal}`);
  const base = { accountId: t.accountId, transactionId, as };
  if (afterMs === 0) {
    const reversal = reverseNow(state, t, as);
    const edit = state.edits.record({
      at: state.clock.iso(),
      ...base,
      action: "reversed",
      ...(reversal && { reversalId: reversal.transactionId }),
    });
    return changeOf(edit, t, reversal);
  }
  scheduleReversal(state, t, state.clock.now() + afterMs, as, (outcome) =>
    logOutcome(state, base, outcome),
  );
  const edit = state.edits.record({
    at: state.clock.iso(),
    ...base,
    action: "reversal_scheduled",
    dueAt: state.clock.iso(t.reversalDueAt),
  });
  return changeOf(edit, t);
}

function logOutcome(
  state: SandboxState,
  base: { accountId: string; transactionId: string; as: ReversalStyle },
  outcome: ReversalOutcome,
): void {
  const at = state.clock.iso();
  if (!outcome.reversed) {
    state.edits.record({ at, ...base, action: "reversal_skipped", reason: outcome.reason });
    return;
  }
  const reversalId = outcome.reversal?.transactionId;
  state.edits.record({ at, ...base, action: "reversed", ...(reversalId && { reversalId }) });
}

/**
 * Changes what a fiat transaction says (status, amount, currency, creation time, visibility)
 * and moves its money to match, all or nothing: the ledger then holds what the records say.
 */
export function editTransaction(
  state: SandboxState,
  transactionId: string,
  edit: TransactionEdit,
): BooksChange {
  const t = controlled(state, transactionId);
  const before = factsOf(t);
  const next: TransactionRecord = {
    ...t,
    walletId: walletFor(state, t, edit.currency),
    currency: edit.currency ?? t.currency,
    amountMinor: edit.amount === undefined ? t.amountMinor : fiatToMinor(edit.amount),
    hidden: edit.hidden ?? t.hidden,
    createdAt: edit.createdAt === undefined ? t.createdAt : new Date(edit.createdAt).toISOString(),
    ...(edit.status !== undefined && statusFields(t, edit.status)),
  };
  postDifference(state, t, next, controlRef(state, t, changedFacts(before, factsOf(next))));
  Object.assign(t, next, { updatedAt: state.clock.iso() });
  const entry = state.edits.record({
    at: state.clock.iso(),
    accountId: t.accountId,
    transactionId,
    action: "edit",
    before,
    after: factsOf(t),
  });
  return changeOf(entry, t);
}

/** "status FAILED -> SUCCESSFUL; amount 100 -> 90", or "no change". */
function changedFacts(before: TransactionFacts, after: TransactionFacts): string {
  const changed = (Object.keys(before) as (keyof TransactionFacts)[])
    .filter((k) => before[k] !== after[k])
    .map((k) => `${k} ${before[k]} -> ${after[k]}`);
  return changed.length > 0 ? changed.join("; ") : "no change";
}

/** A new status clears a return's word; a failure keeps its reason, or is given one. */
function statusFields(t: TransactionRecord, status: TransactionStatus) {
  const failed = status === "FAILED" || status === "CANCELLED";
  return {
    status,
    returnedAs: undefined,
    failureReason: failed ? (t.failureReason ?? FAILED_BY_HAND) : undefined,
  };
}

function walletFor(state: SandboxState, t: TransactionRecord, currency: Currency | undefined) {
  if (currency === undefined || currency === t.currency) return t.walletId;
  const wallet = state.walletOf(t.accountId, currency);
  if (!wallet) throw fieldError("currency", `account ${t.accountId} has no ${currency} wallet`);
  return wallet.walletId;
}

/** A DEBIT another system made on the account: in its lists, under no idempotency key. */
export function externalDebit(
  state: SandboxState,
  accountId: string,
  debit: ExternalDebit,
): BooksChange {
  return outsideTransaction(state, accountId, debit, "DEBIT");
}

/**
 * Money paid into the account's wallet from outside (a bank transfer funding it): a SUCCESSFUL
 * CREDIT, so a wallet that ran out can pay again.
 */
export function topUp(
  state: SandboxState,
  accountId: string,
  credit: { readonly amount: number; readonly currency: Currency },
): BooksChange {
  return outsideTransaction(
    state,
    accountId,
    { ...credit, narration: "top-up (outside the API)" },
    "CREDIT",
  );
}

function outsideTransaction(
  state: SandboxState,
  accountId: string,
  debit: ExternalDebit,
  type: "DEBIT" | "CREDIT",
): BooksChange {
  if (!state.accounts.has(accountId))
    throw new SandboxError(404, "not_found", `account ${accountId} not found`);
  const wallet = state.walletOf(accountId, debit.currency);
  if (!wallet) throw fieldError("currency", `account ${accountId} has no ${debit.currency} wallet`);
  const createdAt =
    debit.createdAt === undefined ? state.clock.iso() : new Date(debit.createdAt).toISOString();
  const status = debit.status ?? "SUCCESSFUL";
  const t = newTransaction(state, contextOf(state, accountId, null), {
    walletId: wallet.walletId,
    type,
    channel: debit.channel ?? "bank",
    amountMinor: fiatToMinor(debit.amount),
    currency: debit.currency,
    narration: debit.narration,
    status,
    createdAt,
  });
  if (status === "FAILED" || status === "CANCELLED") t.failureReason = FAILED_BY_HAND;
  t.updatedAt = createdAt;
  try {
    state.ledger.post(positionOf(t), controlRef(state, t, "external debit (another system)"));
  } catch (error) {
    if (error instanceof SandboxError && error.code === "insufficient_funds")
      throw new SandboxError(
        400,
        "insufficient_funds",
        `insufficient ${debit.currency} balance for this amount`,
      );
    throw error;
  }
  state.transactions.set(t.transactionId, t);
  const edit = state.edits.record({
    at: state.clock.iso(),
    accountId,
    transactionId: t.transactionId,
    action: type === "DEBIT" ? "external_debit" : "top_up",
    after: factsOf(t),
  });
  return changeOf(edit, t);
}

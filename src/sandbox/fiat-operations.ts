import type { z } from "zod";
import type { Currency } from "../contract/enums.js";
import type {
  CreateVirtualAccountBody,
  CreateWalletBody,
  FundWalletBody,
  ListTransactionsQuery,
  Transaction,
  VirtualAccount,
  Wallet,
  WithdrawToBankBody,
  WithdrawToMobileMoneyBody,
} from "../contract/index.js";
import { inWindow } from "./list-window.js";
import { type ForcedOutcome, forcedOutcome } from "./magic-values.js";
import { fiatToMinor } from "./money.js";
import {
  presentTransaction,
  presentVirtualAccount,
  presentWallet,
  shownStatus,
} from "./present.js";
import type { TransactionRecord, WalletRecord } from "./records.js";
import type { RequestContext } from "./request-context.js";
import { scheduleReversal } from "./reversals.js";
import { fieldError, SandboxError } from "./sandbox-error.js";
import { type SandboxState, walletBalance } from "./sandbox-state.js";
import { contextOf, newTransaction, refOf } from "./transaction-records.js";

const FAILURE_REASON = "the beneficiary's institution rejected the transfer";

function requireWallet(state: SandboxState, accountId: string, currency: Currency): WalletRecord {
  const wallet = state.walletOf(accountId, currency);
  if (!wallet)
    throw fieldError(
      "currency",
      `this account has no ${currency} wallet (create one with POST /wallet)`,
    );
  return wallet;
}

function insufficientFunds(currency: Currency): SandboxError {
  return new SandboxError(
    400,
    "insufficient_funds",
    `insufficient ${currency} balance for this amount`,
  );
}

/** 4.1 and 4.2: hold the amount now; PENDING resolves to SUCCESSFUL (hold settles) or FAILED (hold released). */
export function withdraw(
  state: SandboxState,
  ctx: RequestContext,
  channel: "bank" | "mobile_money",
  body: z.output<typeof WithdrawToBankBody> | z.output<typeof WithdrawToMobileMoneyBody>,
): Transaction {
  const destination = "accountNumber" in body ? body.accountNumber : body.phoneNumber;
  const outcome = forcedOutcome(destination, body.amount);
  const wallet = requireWallet(state, ctx.account.accountId, body.currency);
  if (outcome === "insufficient_funds") throw insufficientFunds(body.currency);
  const minor = fiatToMinor(body.amount);
  const txn = newTransaction(state, ctx, {
    walletId: wallet.walletId,
    type: "DEBIT",
    channel,
    amountMinor: minor,
    currency: body.currency,
    narration: body.narration,
  });
  try {
    state.ledger.post(
      [
        { balance: walletBalance(wallet.walletId, "available"), delta: -minor },
        { balance: walletBalance(wallet.walletId, "held"), delta: minor },
      ],
      refOf(state, txn, txn.transactionId, "hold for withdrawal"),
    );
  } catch (error) {
    if (error instanceof SandboxError && error.code === "insufficient_funds")
      throw insufficientFunds(body.currency);
    throw error;
  }
  state.transactions.set(txn.transactionId, txn);
  if (outcome !== "stay_pending")
    state.schedule(state.settleDelayMs, (settledAt) =>
      settleWithdrawal(state, txn, outcome, settledAt),
    );
  return presentTransaction(txn);
}

function settleWithdrawal(
  state: SandboxState,
  txn: TransactionRecord,
  outcome: ForcedOutcome | undefined,
  settledAt: number,
): void {
  // A hand edit may have settled or hidden it already: it then stays as the edit left it.
  if (txn.status !== "PENDING" || txn.hidden) return;
  const held = walletBalance(txn.walletId, "held");
  const available = walletBalance(txn.walletId, "available");
  txn.updatedAt = state.clock.iso();
  if (outcome === "fail") {
    state.ledger.post(
      [
        { balance: held, delta: -txn.amountMinor },
        { balance: available, delta: txn.amountMinor },
      ],
      refOf(state, txn, txn.transactionId, "withdrawal failed: hold released"),
    );
    txn.status = "FAILED";
    txn.failureReason = FAILURE_REASON;
    return;
  }
  state.ledger.post(
    [{ balance: held, delta: -txn.amountMinor }],
    refOf(state, txn, txn.transactionId, "withdrawal paid out"),
  );
  txn.status = "SUCCESSFUL";
  scheduleMagicReversal(state, txn, outcome, settledAt);
}

/** 0000000003 and 888.88 are reversed in the sandbox's style, 0000000005 and 555.55 as a status. */
function scheduleMagicReversal(
  state: SandboxState,
  txn: TransactionRecord,
  outcome: ForcedOutcome | undefined,
  settledAt: number,
): void {
  // Counted from when it was due to settle: one long advance of the clock does both.
  const dueAt = settledAt + state.reverseAfterMs;
  if (outcome === "reverse") scheduleReversal(state, txn, dueAt, state.reversalStyle);
  if (outcome === "reverse_as_status") scheduleReversal(state, txn, dueAt, "status");
}

/** 4.3: a CREDIT, PENDING, then SUCCESSFUL (credited) or FAILED. */
export function fundWallet(
  state: SandboxState,
  ctx: RequestContext,
  body: z.output<typeof FundWalletBody>,
): Transaction {
  const wallet = requireWallet(state, ctx.account.accountId, body.currency);
  const outcome = forcedOutcome(body.phoneNumber, body.amount);
  const txn = newTransaction(state, ctx, {
    walletId: wallet.walletId,
    type: "CREDIT",
    channel: "fund_wallet",
    amountMinor: fiatToMinor(body.amount),
    currency: body.currency,
    narration: undefined,
  });
  state.transactions.set(txn.transactionId, txn);
  if (outcome !== "stay_pending") {
    state.schedule(state.settleDelayMs, (settledAt) => {
      if (txn.status !== "PENDING" || txn.hidden) return;
      txn.updatedAt = state.clock.iso();
      if (outcome === "fail" || outcome === "insufficient_funds") {
        txn.status = "FAILED";
        txn.failureReason =
          outcome === "fail" ? "the payment was declined" : "the payer had insufficient funds";
        return;
      }
      state.ledger.post(
        [{ balance: walletBalance(txn.walletId, "available"), delta: txn.amountMinor }],
        refOf(state, txn, txn.transactionId, "wallet funded"),
      );
      txn.status = "SUCCESSFUL";
      scheduleMagicReversal(state, txn, outcome, settledAt);
    });
  }
  return presentTransaction(txn);
}

/** 4.5 */
export function createWallet(
  state: SandboxState,
  ctx: RequestContext,
  body: z.output<typeof CreateWalletBody>,
): Wallet {
  if (state.walletOf(ctx.account.accountId, body.currency)) {
    throw fieldError("currency", `this account already has a ${body.currency} wallet`);
  }
  return presentWallet(state, state.createWallet(ctx.account.accountId, body.currency));
}

/** 4.6: one-time NGN account, valid for `validFor` minutes. */
export function createVirtualAccount(
  state: SandboxState,
  ctx: RequestContext,
  body: z.output<typeof CreateVirtualAccountBody>,
): VirtualAccount {
  const id = state.nextId("va");
  const record = {
    virtualAccountId: id,
    accountId: ctx.account.accountId,
    accountNumber: `99${id.slice(-8).padStart(8, "0")}`,
    amountMinor: fiatToMinor(body.amount),
    used: false,
    expiresAtMs: state.clock.now() + body.validFor * 60_000,
    createdAt: state.clock.iso(),
  };
  state.virtualAccounts.set(record.accountNumber, record);
  return presentVirtualAccount(state, record);
}

/** Control API: money arrives on a virtual account and credits the owner's NGN wallet. */
export function receiveInboundTransfer(
  state: SandboxState,
  accountNumber: string,
  amount: number,
): Transaction {
  const va = state.virtualAccounts.get(accountNumber);
  if (!va) throw new SandboxError(404, "not_found", `virtual account ${accountNumber} not found`);
  const view = presentVirtualAccount(state, va);
  if (view.status !== "ACTIVE")
    throw fieldError("accountNumber", `virtual account is ${view.status}`);
  if (fiatToMinor(amount) !== va.amountMinor)
    throw fieldError("amount", `must equal the expected ${view.amount}`);
  const wallet = state.walletOf(va.accountId, "NGN") ?? state.createWallet(va.accountId, "NGN");
  const txn = newTransaction(state, contextOf(state, va.accountId, null), {
    walletId: wallet.walletId,
    type: "CREDIT",
    channel: "virtual_account",
    amountMinor: va.amountMinor,
    currency: "NGN",
    narration: `transfer to ${accountNumber}`,
    status: "SUCCESSFUL",
  });
  state.ledger.post(
    [{ balance: walletBalance(wallet.walletId, "available"), delta: va.amountMinor }],
    refOf(state, txn, txn.transactionId, "inbound transfer"),
  );
  state.transactions.set(txn.transactionId, txn);
  va.used = true;
  return presentTransaction(txn);
}

/** 4.11 */
export function listTransactions(
  state: SandboxState,
  ctx: RequestContext,
  query: z.output<typeof ListTransactionsQuery>,
): { transactions: Transaction[] } {
  const rows = [...state.transactions.values()].filter(
    (t) =>
      t.accountId === ctx.account.accountId &&
      (query.currency === undefined || t.currency === query.currency) &&
      (query.type === undefined || t.type === query.type) &&
      !t.hidden &&
      (query.status === undefined || shownStatus(t) === query.status) &&
      inWindow(t.createdAt, query),
  );
  const sortBy = query.sortBy ?? "date";
  const direction = query.sortDirection === "asc" ? 1 : -1;
  const key = (t: TransactionRecord): string | number =>
    sortBy === "amount"
      ? t.amountMinor
      : sortBy === "type"
        ? t.type
        : sortBy === "status"
          ? shownStatus(t)
          : t.createdAt;
  rows.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    const primary = ka < kb ? -1 : ka > kb ? 1 : 0;
    return direction * (primary || (a.transactionId < b.transactionId ? -1 : 1));
  });
  return { transactions: rows.map(presentTransaction) };
}

/** 4.12 */
export function getTransaction(
  state: SandboxState,
  ctx: RequestContext,
  transactionId: string,
): Transaction {
  const t = state.owned(state.transactions, transactionId, "transaction", ctx.account.accountId);
  // Hidden: as if the provider never had it.
  if (t.hidden) throw new SandboxError(404, "not_found", `transaction ${transactionId} not found`);
  return presentTransaction(t);
}

import type {
  Order,
  StableTransaction,
  Transaction,
  VirtualAccount,
  Wallet,
} from "../contract/index.js";
import { microToStable, minorToFiat } from "./money.js";
import type {
  OrderRecord,
  StableTransactionRecord,
  TransactionRecord,
  VirtualAccountRecord,
  WalletRecord,
} from "./records.js";
import { type SandboxState, walletBalance } from "./sandbox-state.js";

/**
 * The named fields of `record` that are set: an answer leaves an unset optional field out
 * rather than sending it as undefined.
 */
function definedFields<R, K extends keyof R>(
  record: R,
  keys: readonly K[],
): { [P in K]?: Exclude<R[P], undefined> } {
  const fields: { [P in K]?: Exclude<R[P], undefined> } = {};
  for (const key of keys) {
    const value = record[key];
    if (value !== undefined) fields[key] = value as Exclude<R[K], undefined>;
  }
  return fields;
}

/** The status a transaction shows: its return's word once returned as a status change. */
export function shownStatus(t: TransactionRecord): string {
  return t.returnedAs ?? t.status;
}

/** Records as the contract's `data` shapes: fiat in major units, stable as decimal strings. */
export function presentTransaction(t: TransactionRecord): Transaction {
  return {
    transactionId: t.transactionId,
    type: t.type,
    status: shownStatus(t),
    channel: t.channel,
    amount: minorToFiat(t.amountMinor),
    fee: minorToFiat(t.feeMinor),
    currency: t.currency,
    ...definedFields(t, ["narration", "failureReason", "reversalOf", "reversedBy"]),
    ...(t.idempotencyKey !== null && { reference: t.idempotencyKey }),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

export function presentStableTransaction(t: StableTransactionRecord): StableTransaction {
  return {
    transactionId: t.transactionId,
    subAccountId: t.subAccountId,
    type: t.type,
    status: t.status,
    currency: t.currency,
    network: t.network,
    amount: microToStable(t.amountMicro),
    ...definedFields(t, ["toAddress", "relatedTransactionId", "failureReason"]),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

export function presentOrder(o: OrderRecord): Order {
  return {
    orderId: o.orderId,
    offerId: o.offerId,
    status: o.status,
    amount: minorToFiat(o.amountMinor),
    fromCurrency: o.fromCurrency,
    toCurrency: o.toCurrency,
    rate: o.rate,
    convertedAmount: minorToFiat(o.convertedMinor),
    buyerDebitPaymentMethod: o.buyerDebitPaymentMethod,
    buyerCreditPaymentMethod: o.buyerCreditPaymentMethod,
    ...definedFields(o, ["paymentLinkToken", "failureReason"]),
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
  };
}

export function presentWallet(state: SandboxState, w: WalletRecord): Wallet {
  return {
    walletId: w.walletId,
    currency: w.currency,
    availableBalance: minorToFiat(state.ledger.balance(walletBalance(w.walletId, "available"))),
    heldBalance: minorToFiat(state.ledger.balance(walletBalance(w.walletId, "held"))),
    createdAt: w.createdAt,
  };
}

export const VIRTUAL_ACCOUNT_BANK = "Sandbox Collections Bank";

export function presentVirtualAccount(
  state: SandboxState,
  v: VirtualAccountRecord,
): VirtualAccount {
  const status = v.used ? "USED" : state.clock.now() >= v.expiresAtMs ? "EXPIRED" : "ACTIVE";
  return {
    virtualAccountId: v.virtualAccountId,
    accountNumber: v.accountNumber,
    accountName: `moneyq sandbox ${v.accountId}`,
    bankName: VIRTUAL_ACCOUNT_BANK,
    amount: minorToFiat(v.amountMinor),
    currency: "NGN",
    status,
    expiresAt: state.clock.iso(v.expiresAtMs),
    createdAt: v.createdAt,
  };
}

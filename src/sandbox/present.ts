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

/** Records as the contract's `data` shapes: fiat in major units, stable as decimal strings. */
export function presentTransaction(t: TransactionRecord): Transaction {
  return {
    transactionId: t.transactionId,
    type: t.type,
    status: t.status,
    channel: t.channel,
    amount: minorToFiat(t.amountMinor),
    fee: minorToFiat(t.feeMinor),
    currency: t.currency,
    ...(t.narration !== undefined && { narration: t.narration }),
    ...(t.failureReason !== undefined && { failureReason: t.failureReason }),
    ...(t.reversalOf !== undefined && { reversalOf: t.reversalOf }),
    ...(t.reversedBy !== undefined && { reversedBy: t.reversedBy }),
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
    ...(t.toAddress !== undefined && { toAddress: t.toAddress }),
    ...(t.relatedTransactionId !== undefined && { relatedTransactionId: t.relatedTransactionId }),
    ...(t.failureReason !== undefined && { failureReason: t.failureReason }),
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
    ...(o.paymentLinkToken !== undefined && { paymentLinkToken: o.paymentLinkToken }),
    ...(o.failureReason !== undefined && { failureReason: o.failureReason }),
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
